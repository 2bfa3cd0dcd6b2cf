import type { WorkerStatus } from '@temporalio/worker';
import { readinessOf } from '../../../src/workers/worker-health';

const where = { address: 'temporal:7233', namespace: 'default', taskQueue: 'q' };
const running: WorkerStatus = {
  runState: 'RUNNING',
  workflowPollerState: 'POLLING',
  activityPollerState: 'POLLING',
  hasOutstandingWorkflowPoll: true,
  hasOutstandingActivityPoll: true,
  numInFlightWorkflowActivations: 0,
  numInFlightActivities: 2,
  numInFlightNonLocalActivities: 2,
  numInFlightLocalActivities: 0,
  numCachedWorkflows: 7,
  numHeartbeatingActivities: 0,
};

describe('readinessOf', () => {
  it('is ready while the frontend answers and the worker runs with both pollers polling', () => {
    expect(readinessOf(running, { connected: true, ms: 3 }, where)).toEqual({
      status: 'ready',
      temporal: { address: 'temporal:7233', namespace: 'default', connected: true, ms: 3 },
      worker: {
        taskQueue: 'q',
        state: 'RUNNING',
        workflowPoller: 'POLLING',
        activityPoller: 'POLLING',
        inFlightActivities: 2,
        cachedWorkflows: 7,
      },
    });
  });

  it.each([
    ['the frontend does not answer', running, { connected: false as const, error: 'deadline exceeded' }],
    [
      'the worker is not running yet',
      { ...running, runState: 'INITIALIZED' as const },
      { connected: true as const, ms: 1 },
    ],
    ['the worker drains', { ...running, runState: 'DRAINING' as const }, { connected: true as const, ms: 1 }],
    ['a poller failed', { ...running, activityPollerState: 'FAILED' as const }, { connected: true as const, ms: 1 }],
  ])('is not ready when %s', (_why, status, probe) => {
    expect(readinessOf(status, probe, where).status).toBe('not_ready');
  });
});
