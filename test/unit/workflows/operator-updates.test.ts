import { OperatorRefusal } from '../../../src/workflows/errors';
import {
  checkCancelPipeline,
  checkCancelStep,
  checkRaiseBudget,
  checkRetryStep,
  validateResolution,
} from '../../../src/workflows/operator-updates';
import type { PipelineSummary, StepSummary } from '../../../src/workflows/pipeline-types';
import type { AmbiguousSubmit } from '../../../src/workflows/recovery-types';

function row(id: string, status: StepSummary['status'], extra: Record<string, unknown> = {}): StepSummary {
  return {
    id,
    model: 'service-upscale-video-fast',
    status,
    stepKey: `p/job/${id}`,
    requestIds: [],
    attempts: 0,
    quoted: 0,
    charged: 0,
    refunded: 0,
    polls: 0,
    ...extra,
  } as StepSummary;
}

const summary = (over: Partial<PipelineSummary> = {}): PipelineSummary => ({
  name: 'p',
  status: 'running',
  currentStep: 'revoice',
  budgetCredits: 200,
  ledger: { quoted: 130, charged: 130, refunded: 0, net: 130 },
  steps: [row('generate', 'completed'), row('revoice', 'running', { phase: 'waiting' }), row('upscale', 'pending')],
  outputs: {},
  ...over,
});

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OperatorRefusal);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('operator update validators', () => {
  it('cancelStep: a running or pending step is accepted; a completed one is refused with the reason', () => {
    expect(checkCancelStep(summary(), { step: 'revoice' }).id).toBe('revoice');
    expect(checkCancelStep(summary(), { step: 'upscale', reason: 'wrong voice' }).id).toBe('upscale');
    expect(refusal(() => checkCancelStep(summary(), { step: 'generate' }))).toBe(
      'step: generate is completed; only a pending or running step can be cancelled (its output is already paid for and kept)',
    );
    expect(refusal(() => checkCancelStep(summary(), { step: 'nope' }))).toBe(
      'step: no step "nope" in pipeline p (steps: generate, revoice, upscale)',
    );
    expect(refusal(() => checkCancelStep(summary(), {}))).toMatch(/^cancelStep needs \{"step": "<step id>"\}/);
    expect(refusal(() => checkCancelStep(summary(), { step: 'revoice', reason: 3 }))).toBe('reason: must be a string');
    expect(refusal(() => checkCancelStep(summary({ status: 'completed' }), { step: 'upscale' }))).toBe(
      'pipeline p is completed; it can no longer be changed',
    );
  });

  it('cancelPipeline: refused once the pipeline is over', () => {
    expect(() => checkCancelPipeline(summary(), { reason: 'x' })).not.toThrow();
    expect(() => checkCancelPipeline(summary(), undefined)).not.toThrow();
    expect(refusal(() => checkCancelPipeline(summary({ status: 'failed' }), {}))).toBe(
      'pipeline p is failed; it can no longer be changed',
    );
    expect(refusal(() => checkCancelPipeline(summary(), 'now'))).toBe(
      'cancelPipeline takes no argument or {"reason": "<text>"}',
    );
  });

  it('raiseBudget: refused below what is spent, when it does not raise, or not a whole number', () => {
    expect(checkRaiseBudget(summary(), { credits: 500 })).toBe(500);
    expect(refusal(() => checkRaiseBudget(summary(), { credits: 100 }))).toBe(
      'credits: a budget of 100 is below the 130 credits this pipeline has already spent',
    );
    expect(refusal(() => checkRaiseBudget(summary(), { credits: 150 }))).toBe(
      'credits: 150 does not raise the current budget of 200 credits',
    );
    expect(refusal(() => checkRaiseBudget(summary(), { credits: 2.5 }))).toMatch(
      /^credits: must be a positive whole number/,
    );
    expect(refusal(() => checkRaiseBudget(summary(), { credits: '900' }))).toMatch(
      /^credits: must be a positive whole number/,
    );
    // Without a budget, any amount not below the spend sets one.
    expect(checkRaiseBudget(summary({ budgetCredits: null }), { credits: 130 })).toBe(130);
  });

  it('retryStep: only a step backing off after a failed attempt', () => {
    const backingOff = summary({
      steps: [
        row('generate', 'completed'),
        row('revoice', 'running', { phase: 'backing-off' }),
        row('upscale', 'pending'),
      ],
    });
    expect(checkRetryStep(backingOff, { step: 'revoice' }).id).toBe('revoice');
    expect(refusal(() => checkRetryStep(summary(), { step: 'revoice' }))).toBe(
      'step: revoice is running (waiting), not waiting to resubmit after a failed attempt; only such a step can be retried now',
    );
    expect(refusal(() => checkRetryStep(summary(), { step: 'generate' }))).toMatch(
      /^step: generate is completed, not waiting to resubmit/,
    );
  });
});

const waitingStep: AmbiguousSubmit = {
  step: 'generate',
  idempotencyKey: 'reelflow:p/job/generate:r:1',
  since: '2026-11-23T10:00:00.000Z',
  state: 'waiting',
};

describe('the resolveAmbiguousStep validator', () => {
  it('accepts adopt with a request id, resubmit and give-up for the waiting step', () => {
    expect(() =>
      validateResolution(waitingStep, {
        step: 'generate',
        action: 'adopt',
        requestId: 'e4f467d0-e2cf-41d7-94f1-30d6a50da8c5',
      }),
    ).not.toThrow();
    expect(() =>
      validateResolution(waitingStep, { step: 'generate', action: 'resubmit', note: 'checked the dashboard: no job' }),
    ).not.toThrow();
    expect(() => validateResolution(waitingStep, { step: 'generate', action: 'give-up' })).not.toThrow();
  });

  it.each([
    [undefined, { step: 'generate', action: 'give-up' }, /^step: no ambiguous step is waiting/],
    [
      { ...waitingStep, state: 'adopted' as const },
      { step: 'generate', action: 'give-up' },
      /^step: .*generate is adopted/,
    ],
    [waitingStep, { step: 'upscale', action: 'give-up' }, /^step: the waiting ambiguous step is generate, not upscale/],
    [waitingStep, { step: 'generate', action: 'delete' }, /^action: must be adopt, resubmit or give-up/],
    [waitingStep, { step: 'generate', action: 'adopt' }, /^requestId: adopt needs/],
    [waitingStep, { step: 'generate', action: 'adopt', requestId: '../../etc' }, /^requestId: adopt needs/],
    [waitingStep, { step: 'generate', action: 'resubmit', requestId: 'x' }, /^requestId: only adopt/],
    [waitingStep, { step: 'generate', action: 'give-up', note: 'x'.repeat(501) }, /^note: /],
  ])('rejects %j / %j naming the field', (state, decision, message) => {
    expect(() => validateResolution(state, decision as never)).toThrow(message);
  });
});
