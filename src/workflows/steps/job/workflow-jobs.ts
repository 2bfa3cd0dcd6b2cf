import { CancellationScope, setHandler } from '@temporalio/workflow';
import { preparedJobEventSignal, resolveAmbiguousUpdate, jobEventSignal, slotGrantedSignal } from '../../definitions';
import { validateResolution } from '../../operator-updates';
import { JobEventBuffer } from './job-event-buffer';
import { preparedRevoke } from './proxies';
import type { RecoveryState, WorkflowJobs } from './types';

let shared: WorkflowJobs | undefined;

/**
 * This workflow's jobs' shared state; the first call registers the `jobEvent` and `slotGranted` signals and the
 * `resolveAmbiguousStep` update (before the first await: an event may overtake its submit's answer).
 */
export function workflowJobs(): WorkflowJobs {
  if (shared) return shared;
  const jobs: WorkflowJobs = (shared = {
    events: new JobEventBuffer(),
    recovery: { abandoned: [], ambiguous: [] },
    charges: [],
    submittedAhead: new Map(),
    preparedBehind: new Map(),
    slotGrants: new Set(),
  });
  // May come before the submit that queued it returns (the slot freed at once): kept until awaited.
  setHandler(slotGrantedSignal, (holder) => void jobs.slotGrants.add(holder));
  setHandler(jobEventSignal, (event) => jobs.events.accept(event));
  setHandler(preparedJobEventSignal, (event, next) => {
    jobs.submittedAhead.set(next.idempotencyKey, next);
    if (next.nextKey) jobs.preparedBehind.set(next.request.request_id, next.nextKey);
    jobs.events.accept(event);
  });
  setHandler(
    resolveAmbiguousUpdate,
    (decision) => {
      const { step, idempotencyKey } = jobs.recovery.waiting as NonNullable<RecoveryState['waiting']>;
      jobs.recovery.decision = decision;
      const { action, requestId } = decision;
      return { step, action, idempotencyKey, ...(requestId ? { requestId } : {}) };
    },
    { validator: (decision) => validateResolution(jobs.recovery.waiting, decision) },
  );
  return jobs;
}

/**
 * Revokes the submits prepared behind this workflow's jobs that it will not submit (it ends early): a
 * job the bridge submitted already is cancelled at the service (refunded). No activity when none is left.
 */
export async function revokePreparedSubmits(): Promise<void> {
  const { preparedBehind } = workflowJobs();
  if (preparedBehind.size === 0) return;
  const requestIds = [...preparedBehind.keys()];
  preparedBehind.clear();
  await CancellationScope.nonCancellable(() => preparedRevoke.revokePreparedSubmits(requestIds));
}

/** Resolves once the ledger quotes running beside later steps answered (or failed: the charge stays unknown). */
export async function chargesSettled(): Promise<void> {
  const { charges } = workflowJobs();
  while (charges.length) await Promise.all(charges.splice(0));
}
