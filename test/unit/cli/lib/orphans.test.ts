import { chargedJobs, parseSince } from '../../../../src/cli/lib/orphans';

describe('orphans: ledger arithmetic', () => {
  it('sums charges and refunds per request id from `since` on, ignoring seed and grant entries', () => {
    const ledger = {
      entries: [
        { kind: 'seed', amount: 1000, request_id: null, at: '2026-11-23T09:00:00.000Z' },
        { kind: 'charge', amount: -80, request_id: 'old', at: '2026-11-23T09:30:00.000Z' },
        { kind: 'charge', amount: -80, request_id: 'a', at: '2026-11-23T10:00:01.000Z' },
        { kind: 'charge', amount: -30, request_id: 'b', at: '2026-11-23T10:00:02.000Z' },
        { kind: 'refund', amount: 30, request_id: 'b', at: '2026-11-23T10:00:05.000Z' },
      ],
    };
    const jobs = chargedJobs(ledger, new Date('2026-11-23T10:00:00.000Z'));
    expect([...jobs.entries()]).toEqual([
      ['a', { charged: 80, refunded: 0, chargedAt: '2026-11-23T10:00:01.000Z' }],
      ['b', { charged: 30, refunded: 30, chargedAt: '2026-11-23T10:00:02.000Z' }],
    ]);
  });

  it('parses --since durations and refuses anything else', () => {
    expect([parseSince('30s'), parseSince('90m'), parseSince('24h'), parseSince('7d'), parseSince('1.5h')]).toEqual([
      30_000, 5_400_000, 86_400_000, 604_800_000, 5_400_000,
    ]);
    expect([parseSince('yesterday'), parseSince('0h'), parseSince('-1h'), parseSince('')]).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });
});
