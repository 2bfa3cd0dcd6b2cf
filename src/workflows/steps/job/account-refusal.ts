import {
  ApplicationFailure,
  condition,
  getExternalWorkflowHandle,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../../contract/failure-types';
import { batchItemWaitingSignal, batchResumedSignal } from '../../definitions';
import type { StepAttempt } from '../../pipeline-types';
import { SUBMIT_MAX_ATTEMPTS } from '../../../contract/submit-attempts';
import type { AccountRefusal, JobHandle } from './types';

/**
 * Refusals of the account rather than of the job: no credits left (402 `insufficient_credits`), a
 * refused key (401 `unauthorized`, 403 `forbidden`), or 429s past the bound — the submit activity's
 * SUBMIT_MAX_ATTEMPTS attempts (each the client's own retries, honouring Retry-After) all answered 429.
 * Every other item of the account would be refused the same way, so a batch pauses on them
 * (docs/batches.md); a lone pipeline fails with the reason as before.
 */
const ACCOUNT_REFUSAL_CODES = new Set(['insufficient_credits', 'unauthorized', 'forbidden']);

/** The account-level refusal a submit's failure is, if it is one (ServiceFailureDetails of src/activities/errors.ts). */
export function accountRefusalOf(cause: unknown): AccountRefusal | undefined {
  if (!(cause instanceof ApplicationFailure)) return undefined;
  if (!cause.type?.startsWith(`${FAILURE_TYPES.serviceProblem}:`)) return undefined;
  const details = (cause.details?.[0] ?? {}) as { code?: unknown; status?: unknown };
  const code =
    typeof details.code === 'string' ? details.code : cause.type.slice(FAILURE_TYPES.serviceProblem.length + 1);
  if (ACCOUNT_REFUSAL_CODES.has(code)) return { code, message: cause.message };
  if (details.status === 429)
    return { code, message: `${cause.message} (429 after ${SUBMIT_MAX_ATTEMPTS} submit attempts)` };
  return undefined;
}

/**
 * The account refused `attempt`'s submit and the job's owner waits it out (a batch item): nothing was
 * created, so after the wait the same attempt is submitted again with the same key and body.
 */
export async function waitOutRefusal(job: JobHandle, attempt: StepAttempt, refusal: AccountRefusal): Promise<void> {
  const wait = job.options.whenAccountRefused as NonNullable<typeof job.options.whenAccountRefused>;
  const reason = `the account refused the submit (${refusal.code}: ${refusal.message}); nothing was created`;
  attempt.error = reason;
  job.set({ phase: 'paused', error: `${reason}; waiting for the batch to resume (reelflow batch resume)` });
  await wait(refusal);
  delete attempt.error;
  job.set({ phase: 'submitting', error: undefined });
}

let resumes = 0;
let listening = false;

/**
 * A batch item's wait (ServiceJobOptions.whenAccountRefused): tells batch `batchWorkflowId` that item
 * `name` waits, then resolves on the batch's next `batchResumed`. Cancelling the pipeline ends the wait.
 */
export async function waitForBatchResume(
  batchWorkflowId: string,
  name: string,
  refusal: AccountRefusal,
): Promise<void> {
  if (!listening) {
    listening = true;
    setHandler(batchResumedSignal, () => void (resumes += 1));
  }
  const seen = resumes;
  const at = Date.now();
  const waiting = {
    name,
    workflowId: workflowInfo().workflowId,
    code: refusal.code,
    reason: `item ${name}: ${refusal.message}`,
    at,
  };
  await getExternalWorkflowHandle(batchWorkflowId).signal(batchItemWaitingSignal, waiting);
  await condition(() => resumes > seen);
}
