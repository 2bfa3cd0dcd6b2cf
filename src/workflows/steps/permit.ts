import { CancellationScope, isCancellation } from '@temporalio/workflow';
import type { StepAttempt } from '../pipeline-types';
import { permitActivities, permitRelease } from './proxies';
import type { StepRun } from './step-run';

/**
 * The account's cap on jobs in flight (REELFLOW_ACCOUNT_CONCURRENCY, src/client/account-limits.ts)
 * left no permit for `attempt`'s submit: wait for one here, where a cancel reaches the wait (the
 * submit itself cannot be cancelled). The permit is then the attempt's; a cancel that ends the wait
 * gives back whatever it may have taken.
 */
export async function awaitPermit(run: StepRun, attempt: StepAttempt): Promise<void> {
  const before = run.row.phase;
  run.row.phase = 'capacity';
  run.changed();
  attempt.permit = true;
  try {
    await permitActivities.awaitAccountPermit({ idempotencyKey: attempt.idempotencyKey, workflowId: run.workflowId });
  } catch (error) {
    if (isCancellation(error)) await releasePermit(attempt);
    throw error;
  }
  if (before) run.row.phase = before;
}

/** Gives `attempt`'s permit back once its job is terminal (or was never created); nothing when it holds none. */
export async function releasePermit(attempt: StepAttempt): Promise<void> {
  if (!attempt.permit) return;
  delete attempt.permit;
  await CancellationScope.nonCancellable(() => permitRelease.releaseAccountPermit(attempt.idempotencyKey));
}
