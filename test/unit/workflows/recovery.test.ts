import { validateResolution } from '../../../src/workflows/recovery';
import type { AmbiguousSubmit } from '../../../src/workflows/recovery-types';

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
