import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import {
  endAfterStepError,
  finish,
  firstApplicationFailure,
  sumLedger,
  whenChanged,
} from '../../../../src/workflows/steps/publish';
import type { PipelineSummary, StepSummary } from '../../../../src/workflows/pipeline-types';
import { stepSummary } from '../../../helpers/step-summary';

describe('whenChanged (patch publish-changes)', () => {
  it('runs the upsert for the first value and for every change, never for a repeat', () => {
    const sent: unknown[] = [];
    const upsert = whenChanged((value: unknown) => sent.push(value));
    upsert([{ key: 'ReelflowStatus', value: 'running' }]);
    upsert([{ key: 'ReelflowStatus', value: 'running' }]);
    upsert([{ key: 'ReelflowStatus', value: 'completed' }]);
    upsert([{ key: 'ReelflowStatus', value: 'completed' }]);
    upsert([{ key: 'ReelflowStatus', value: 'running' }]);
    expect(sent).toEqual([
      [{ key: 'ReelflowStatus', value: 'running' }],
      [{ key: 'ReelflowStatus', value: 'completed' }],
      [{ key: 'ReelflowStatus', value: 'running' }],
    ]);
  });

  it('compares by value, not by identity (a summary rebuilt each time counts as unchanged)', () => {
    let calls = 0;
    const upsert = whenChanged(() => (calls += 1));
    upsert({ summary: { status: 'running', steps: [{ id: 'a' }] } });
    upsert({ summary: { status: 'running', steps: [{ id: 'a' }] } });
    expect(calls).toBe(1);
  });
});

function row(id: string, credits: Partial<Pick<StepSummary, 'status' | 'quoted' | 'charged' | 'refunded'>> = {}) {
  return stepSummary(id, credits);
}

function summaryOf(...steps: StepSummary[]): PipelineSummary {
  return {
    name: 'p',
    status: 'running',
    currentStep: null,
    budgetCredits: null,
    ledger: { quoted: 0, charged: 0, refunded: 0, net: 0 },
    steps,
    outputs: {},
  };
}

/** The failure `run` throws (these functions always throw or return). */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('sumLedger', () => {
  it('sums every step; net is charged minus refunded', () => {
    expect(
      sumLedger([row('a', { quoted: 80, charged: 160, refunded: 80 }), row('b', { quoted: 12, charged: 12 })]),
    ).toEqual({ quoted: 92, charged: 172, refunded: 80, net: 92 });
  });

  it('is all zeros without steps', () => {
    expect(sumLedger([])).toEqual({ quoted: 0, charged: 0, refunded: 0, net: 0 });
  });
});

describe('finish (the end of a pipeline)', () => {
  it('marks steps never started as skipped, sets the status, publishes once and returns the summary', () => {
    const published: string[] = [];
    const summary = summaryOf(row('a', { status: 'completed' }), row('b'));
    expect(finish(summary, 'completed', (s) => published.push(s.status))).toBe(summary);
    expect(summary.steps.map((s) => s.status)).toEqual(['completed', 'skipped']);
    expect(published).toEqual(['completed']);
    expect(summary.error).toBeUndefined();
  });

  it('throws the failure after publishing, with its message as the summary’s error', () => {
    const published: (string | undefined)[] = [];
    const summary = summaryOf(row('a'));
    const failure = ApplicationFailure.create({ type: 'StepFailed', message: 'step a broke' });
    expect(thrownBy(() => finish(summary, 'failed', (s) => published.push(s.error), failure))).toBe(failure);
    expect(published).toEqual(['step a broke']);
    expect(summary.status).toBe('failed');
  });

  it('records no error for a cancellation', () => {
    const summary = summaryOf(row('a'));
    thrownBy(() => finish(summary, 'cancelled', () => undefined, new CancelledFailure('pipeline cancelled')));
    expect(summary.error).toBeUndefined();
    expect(summary.status).toBe('cancelled');
  });
});

describe('firstApplicationFailure (failure shaping)', () => {
  const refused = ApplicationFailure.create({ type: 'ServiceProblem:insufficient_credits', message: '402' });

  it('is the failure itself when it is an ApplicationFailure', () => {
    expect(firstApplicationFailure(refused)).toBe(refused);
  });

  it('finds the ApplicationFailure inside an activity failure', () => {
    const activity = new ActivityFailure(
      'activity failed',
      'submitAndSubscribe',
      '1',
      RetryState.NON_RETRYABLE_FAILURE,
      undefined,
      refused,
    );
    expect(firstApplicationFailure(activity)).toBe(refused);
  });

  it('gives nothing for a cancellation, a plain error or a non-error', () => {
    expect(firstApplicationFailure(new CancelledFailure('cancelled'))).toBeUndefined();
    expect(firstApplicationFailure(new Error('boom'))).toBeUndefined();
    expect(firstApplicationFailure('boom')).toBeUndefined();
  });
});

describe('endAfterStepError (failure shaping)', () => {
  const noPublish = () => undefined;

  it('turns a budget failure into BudgetExceeded naming the step, the step budget-exceeded, later steps skipped', () => {
    const summary = summaryOf(row('a', { status: 'running' }), row('b'));
    const cause = ApplicationFailure.create({ type: 'BudgetExceeded', message: 'quote of 80 exceeds 50' });
    const thrown = thrownBy(() =>
      endAfterStepError(summary, summary.steps[0] as StepSummary, cause, cause, noPublish),
    ) as ApplicationFailure;
    expect(thrown.type).toBe('BudgetExceeded');
    expect(thrown.nonRetryable).toBe(true);
    expect(thrown.message).toBe('pipeline p stopped before step a: quote of 80 exceeds 50');
    expect(summary.steps.map((s) => s.status)).toEqual(['budget-exceeded', 'skipped']);
    expect(summary.steps[0]?.error).toBe('quote of 80 exceeds 50');
    expect(summary.status).toBe('failed');
  });

  it('turns any other ApplicationFailure into StepFailed naming the cause’s type, with the summary as details', () => {
    const summary = summaryOf(row('a', { status: 'running' }));
    const cause = ApplicationFailure.create({ type: 'JobFailed', message: 'failed 1 time(s)' });
    const thrown = thrownBy(() =>
      endAfterStepError(summary, summary.steps[0] as StepSummary, cause, new Error('wrapper'), noPublish),
    ) as ApplicationFailure;
    expect(thrown.type).toBe('StepFailed');
    expect(thrown.nonRetryable).toBe(true);
    expect(thrown.message).toBe('pipeline p failed at step a [JobFailed]: failed 1 time(s)');
    expect(thrown.details).toEqual([summary]);
    expect(summary.steps[0]?.status).toBe('failed');
  });

  it('ends a cancelled step as a cancelled pipeline', () => {
    const summary = summaryOf(row('a', { status: 'running' }), row('b'));
    const thrown = thrownBy(() =>
      endAfterStepError(summary, summary.steps[0] as StepSummary, undefined, new CancelledFailure('x'), noPublish),
    );
    expect(thrown).toBeInstanceOf(CancelledFailure);
    expect(summary.status).toBe('cancelled');
    expect(summary.steps.map((s) => s.status)).toEqual(['cancelled', 'skipped']);
  });

  it('turns an error without an ApplicationFailure into StepFailed with its message', () => {
    const summary = summaryOf(row('a', { status: 'running' }));
    const thrown = thrownBy(() =>
      endAfterStepError(summary, summary.steps[0] as StepSummary, undefined, new Error('socket hang up'), noPublish),
    ) as ApplicationFailure;
    expect(thrown.type).toBe('StepFailed');
    expect(thrown.message).toBe('pipeline p failed at step a: socket hang up');
    expect(summary.steps[0]).toMatchObject({ status: 'failed', error: 'socket hang up' });
  });
});
