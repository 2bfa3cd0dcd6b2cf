import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import {
  firstApplicationFailure,
  memoOf,
  stateOperatorsFilterOn,
  searchAttributesOf,
  whenChanged,
} from '../../../../src/workflows/pipeline/publish';
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

describe('searchAttributesOf and memoOf (what the Temporal UI shows, one upsert of each)', () => {
  const summary: PipelineSummary = {
    ...summaryOf(
      {
        ...row('a', { status: 'completed', charged: 30, refunded: 0 }),
        model: 'service-upscale-video-fast',
        requestIds: ['r1'],
      },
      { ...row('b', { status: 'budget-exceeded' }), error: 'quote of 90 credits exceeds the remaining budget of 70' },
    ),
    currentStep: 'b',
    ledger: { quoted: 0, charged: 30, refunded: 0, net: 30 },
  };

  it('sets status, progress and what saved views filter on in one list', () => {
    const attributes = Object.fromEntries(searchAttributesOf(summary).map(({ key, value }) => [key.name, value]));
    expect(attributes).toEqual({
      ReelflowStatus: 'running',
      ReelflowCurrentStep: 'b',
      ReelflowCreditsSpent: 30,
      ReelflowRequestIds: ['r1'],
      ReelflowPipeline: 'p',
      ReelflowModels: [...new Set(summary.steps.flatMap((s) => ('model' in s ? [s.model] : [])))],
      ReelflowOverBudget: true,
    });
  });

  it('keeps the memo small, and adds the recovery record only once there is one', () => {
    expect(memoOf(summary)).toEqual({
      summary: {
        status: 'running',
        currentStep: 'b',
        ledger: summary.ledger,
        steps: [
          { id: 'a', status: 'completed', requestIds: ['r1'], error: null },
          { id: 'b', status: 'budget-exceeded', requestIds: [], error: summary.steps[1]?.error },
        ],
        error: null,
      },
    });
    const recovery = {
      abandoned: [],
      ambiguous: [{ step: 'b', idempotencyKey: 'k', since: 't', state: 'waiting' as const }],
    };
    expect(memoOf({ ...summary, recovery }).recovery).toEqual(recovery);
  });

  it('leaves the summary out of the memo where the search attributes say it (the recovery record stays)', () => {
    expect(memoOf(summary, true)).toEqual({});
    const recovery = { abandoned: [], ambiguous: [] };
    expect(memoOf({ ...summary, recovery }, true)).toEqual({ recovery });
  });
});

describe('stateOperatorsFilterOn (what moves the search attributes)', () => {
  const base = summaryOf({ ...row('a', { status: 'running' }), requestIds: ['r1'] });
  const key = stateOperatorsFilterOn(base);

  it('moves with the status, a new request id, or a step stopped by its budget', () => {
    expect(stateOperatorsFilterOn({ ...base, status: 'completed' })).not.toBe(key);
    expect(
      stateOperatorsFilterOn({ ...base, steps: base.steps.map((s) => ({ ...s, requestIds: ['r1', 'r2'] })) }),
    ).not.toBe(key);
    expect(
      stateOperatorsFilterOn({ ...base, steps: base.steps.map((s) => ({ ...s, status: 'budget-exceeded' })) }),
    ).not.toBe(key);
  });

  it('does not move with the step in flight or the credits alone (they ride along with the next move)', () => {
    expect(stateOperatorsFilterOn({ ...base, currentStep: 'b' })).toBe(key);
    expect(stateOperatorsFilterOn({ ...base, ledger: { quoted: 0, charged: 9, refunded: 0, net: 9 } })).toBe(key);
  });
});
