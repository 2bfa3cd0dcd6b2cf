import { validateResolution } from '../../../src/workflows/recovery';
import type { AmbiguousSubmit } from '../../../src/workflows/recovery-types';
import { chargedJobs, parseSince } from '../../../src/cli/lib/orphans';

const waiting: AmbiguousSubmit = {
  step: 'generate',
  idempotencyKey: 'reelflow:p/job/generate:r:1',
  since: '2026-11-23T10:00:00.000Z',
  state: 'waiting',
};

describe('the resolveAmbiguousStep validator', () => {
  it('accepts adopt with a request id, resubmit and give-up for the waiting step', () => {
    expect(() =>
      validateResolution(waiting, {
        step: 'generate',
        action: 'adopt',
        requestId: 'e4f467d0-e2cf-41d7-94f1-30d6a50da8c5',
      }),
    ).not.toThrow();
    expect(() =>
      validateResolution(waiting, { step: 'generate', action: 'resubmit', note: 'checked the dashboard: no job' }),
    ).not.toThrow();
    expect(() => validateResolution(waiting, { step: 'generate', action: 'give-up' })).not.toThrow();
  });

  it.each([
    [undefined, { step: 'generate', action: 'give-up' }, /^step: no ambiguous step is waiting/],
    [
      { ...waiting, state: 'adopted' as const },
      { step: 'generate', action: 'give-up' },
      /^step: .*generate is adopted/,
    ],
    [waiting, { step: 'upscale', action: 'give-up' }, /^step: the waiting ambiguous step is generate, not upscale/],
    [waiting, { step: 'generate', action: 'delete' }, /^action: must be adopt, resubmit or give-up/],
    [waiting, { step: 'generate', action: 'adopt' }, /^requestId: adopt needs/],
    [waiting, { step: 'generate', action: 'adopt', requestId: '../../etc' }, /^requestId: adopt needs/],
    [waiting, { step: 'generate', action: 'resubmit', requestId: 'x' }, /^requestId: only adopt/],
    [waiting, { step: 'generate', action: 'give-up', note: 'x'.repeat(501) }, /^note: /],
  ])('rejects %j / %j naming the field', (state, decision, message) => {
    expect(() => validateResolution(state, decision as never)).toThrow(message);
  });
});

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
