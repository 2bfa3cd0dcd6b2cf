import { condition } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../../contract/failure-types';
import { workflowFailure } from '../../errors';
import type { StepAttempt } from '../../pipeline-types';
import type { AmbiguousSubmit, ResolveDecision } from '../../recovery-types';
import { reasonOf } from './cancel';
import { api, candidates } from './proxies';
import type { JobHandle } from './types';

/** How long an ambiguous step waits for a decision when the pipeline sets no deadline. */
export const DEFAULT_AMBIGUOUS_DEADLINE_HOURS = 24;

/**
 * The submit of `attempt` may have created a job whose request id is unknown: wait up to the deadline
 * for the operator's `resolveAmbiguousStep` decision, else throw `AmbiguousSubmission`.
 */
export async function awaitDecision(
  job: JobHandle,
  attempt: StepAttempt,
  cause: string,
): Promise<'resubmit' | 'adopted'> {
  const record: AmbiguousSubmit =
    job.jobs.recovery.waiting?.idempotencyKey === attempt.idempotencyKey &&
    job.jobs.recovery.waiting.state === 'waiting'
      ? job.jobs.recovery.waiting
      : { step: job.label, idempotencyKey: attempt.idempotencyKey, since: new Date().toISOString(), state: 'waiting' };
  if (!job.jobs.recovery.ambiguous.includes(record)) job.jobs.recovery.ambiguous.push(record);
  job.jobs.recovery.waiting = record;
  const hours = job.options.ambiguousDeadlineHours ?? DEFAULT_AMBIGUOUS_DEADLINE_HOURS;
  const deadline = new Date(Date.parse(record.since) + hours * 3_600_000).toISOString();
  const waitingFor =
    `${cause}. Waiting until ${deadline} for an operator decision (update resolveAmbiguousStep: adopt a request id, resubmit, or give-up); ` +
    `Idempotency-Key ${attempt.idempotencyKey}`;
  job.set({ phase: 'ambiguous', error: waitingFor });
  attempt.error = cause;
  try {
    record.candidates = await candidates.candidateOrphans(record.since, job.view().requestIds);
  } catch {
    // Candidates are a help, not a need: a ledger that cannot be read leaves the list empty.
  }
  job.changed();

  for (;;) {
    const remainingMs = Date.parse(deadline) - Date.now();
    const decided = remainingMs > 0 && (await condition(() => job.jobs.recovery.decision !== undefined, remainingMs));
    if (!decided) return fail(job, record, `no decision within ${hours} h`);
    const decision = job.jobs.recovery.decision as ResolveDecision;
    job.jobs.recovery.decision = undefined;
    const note = decision.note ? ` (${decision.note})` : '';
    if (decision.action === 'give-up') return fail(job, record, `the operator gave up${note}`);
    const adopt = decision.action === 'adopt';
    if (adopt) {
      const requestId = decision.requestId as string;
      try {
        // Adopt only a job the service knows; its URLs are the default ones (the answer was lost).
        await api.pollJobStatus(requestId);
      } catch (error) {
        job.set({
          error: `adopting ${requestId} failed: ${reasonOf(error)}; still waiting (Idempotency-Key ${attempt.idempotencyKey})`,
        });
        continue;
      }
      attempt.requestId = record.requestId = requestId;
      attempt.adopted = true;
    }
    record.state = adopt ? 'adopted' : 'resubmitted';
    job.jobs.recovery.waiting = undefined;
    job.set({ error: undefined });
    return adopt ? 'adopted' : 'resubmit';
  }
}

function fail(job: JobHandle, record: AmbiguousSubmit, why: string): never {
  record.state = why.startsWith('no decision') ? 'timed-out' : 'given-up';
  job.jobs.recovery.waiting = undefined;
  const message =
    `the submit of step ${job.label} may have created a job whose request id is unknown, and ${why}; ` +
    `reelflow orphans lists it by Idempotency-Key ${record.idempotencyKey}`;
  job.set({ error: message });
  throw workflowFailure(FAILURE_TYPES.ambiguousSubmission, message, {
    idempotencyKey: record.idempotencyKey,
    step: job.label,
  });
}
