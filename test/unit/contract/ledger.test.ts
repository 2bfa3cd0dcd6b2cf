import { accountLedgerSchema, keyLookupSchema } from '../../../src/contract/ledger';

describe('accountLedgerSchema', () => {
  it('reads entries and keeps fields a service adds', () => {
    const parsed = accountLedgerSchema.parse({
      credits: 920,
      entries: [{ seq: 1, kind: 'charge', amount: -80, request_id: 'r1', at: '2026-11-25T10:00:00Z', note: 'x' }],
      page: 1,
    });
    expect(parsed.entries[0]).toMatchObject({ kind: 'charge', amount: -80, request_id: 'r1', note: 'x' });
    expect(parsed).toMatchObject({ page: 1 });
  });

  it('accepts an entry of no request (a top-up) and refuses one without a kind', () => {
    expect(
      accountLedgerSchema.safeParse({ entries: [{ kind: 'top-up', amount: 100, request_id: null, at: 't' }] }).success,
    ).toBe(true);
    const refused = accountLedgerSchema.safeParse({ entries: [{ kind: '', amount: 1, request_id: null, at: 't' }] });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.path).toEqual(['entries', 0, 'kind']);
  });
});

describe('keyLookupSchema', () => {
  it('reads the jobs found by an Idempotency-Key', () => {
    const parsed = keyLookupSchema.parse({
      idempotency_key: 'k',
      requests: [{ request_id: 'r1', status: 'COMPLETED', credits_charged: 80 }],
    });
    expect(parsed.requests.map((r) => r.request_id)).toEqual(['r1']);
  });

  it('refuses a job without a request id', () => {
    expect(keyLookupSchema.safeParse({ idempotency_key: 'k', requests: [{ status: 'COMPLETED' }] }).success).toBe(
      false,
    );
  });
});
