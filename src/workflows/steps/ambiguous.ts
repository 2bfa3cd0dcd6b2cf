import { ApplicationFailure, condition } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../contract/failure-types';
import { type StepAttempt } from '../pipeline-types';
import type { ResolveDecision } from '../recovery-types';
import type { AmbiguousSubmit } from '../recovery-types';
import { api, candidates } from './proxies';
import type { StepRun } from './step-run';

/** How long an ambiguous step waits for a decision when the pipeline sets no deadline. */
export const DEFAULT_AMBIGUOUS_DEADLINE_HOURS = 24;

/**
 * The submit of `attempt` may have created a job whose request id is unknown. The step waits (up to
 * its deadline) for an operator decision, the `resolveAmbiguousStep` update: adopt a request id,
 * resubmit with the same key, or give up. Meanwhile its progress, memo and the Temporal UI show the
 * state, the key and the candidate orphans (charges since the submit that the pipeline does not
 * know). Returns `resubmit` or `adopted` (attempt.requestId set and checked at the service); throws
 * the non-retryable `AmbiguousSubmission` failure on give-up or when the deadline passes.
 */
export async function awaitDecision(
  run: StepRun,
  attempt: StepAttempt,
  cause: string,
): Promise<'resubmit' | 'adopted'> {
  const record: AmbiguousSubmit =
    run.recovery.waiting?.idempotencyKey === attempt.idempotencyKey && run.recovery.waiting.state === 'waiting'
      ? run.recovery.waiting
      : { step: run.stepId, idempotencyKey: attempt.idempotencyKey, since: new Date().toISOString(), state: 'waiting' };
  if (!run.recovery.ambiguous.includes(record)) run.recovery.ambiguous.push(record);
  run.recovery.waiting = record;
  const hours = run.ambiguousDeadlineHours ?? DEFAULT_AMBIGUOUS_DEADLINE_HOURS;
  const deadline = new Date(Date.parse(record.since) + hours * 3_600_000).toISOString();
  run.row.phase = 'ambiguous';
  run.row.error =
    `${cause}. Waiting until ${deadline} for an operator decision (update resolveAmbiguousStep: adopt a request id, resubmit, or give-up); ` +
    `Idempotency-Key ${attempt.idempotencyKey}`;
  attempt.error = cause;
  try {
    const own = run.attempts.flatMap((a) => (a.requestId ? [a.requestId] : []));
    record.candidates = await candidates.candidateOrphans(record.since, own);
  } catch {
    // Candidates are a help, not a need: a ledger that cannot be read leaves the list empty.
  }
  run.changed();

  for (;;) {
    const remainingMs = Date.parse(deadline) - Date.now();
    const decided = remainingMs > 0 && (await condition(() => run.recovery.decision !== undefined, remainingMs));
    if (!decided) return fail(run, record, `no decision within ${hours} h`);
    const decision = run.recovery.decision as ResolveDecision;
    run.recovery.decision = undefined;
    const note = decision.note ? ` (${decision.note})` : '';
    if (decision.action === 'give-up') return fail(run, record, `the operator gave up${note}`);
    if (decision.action === 'resubmit') {
      record.state = 'resubmitted';
      run.recovery.waiting = undefined;
      run.row.error = undefined;
      run.changed();
      return 'resubmit';
    }
    const requestId = decision.requestId as string;
    try {
      // Adopt only a job the service knows; its URLs are the default ones (the answer was lost).
      await api.pollJobStatus(requestId);
    } catch (error) {
      run.row.error = `adopting ${requestId} failed: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}; still waiting (Idempotency-Key ${attempt.idempotencyKey})`;
      run.changed();
      continue;
    }
    attempt.requestId = requestId;
    attempt.adopted = true;
    record.state = 'adopted';
    record.requestId = requestId;
    run.recovery.waiting = undefined;
    run.row.error = undefined;
    run.changed();
    return 'adopted';
  }
}

function fail(run: StepRun, record: AmbiguousSubmit, why: string): never {
  record.state = why.startsWith('no decision') ? 'timed-out' : 'given-up';
  run.recovery.waiting = undefined;
  const message =
    `the submit of step ${run.stepId} may have created a job whose request id is unknown, and ${why}; ` +
    `reelflow orphans lists it by Idempotency-Key ${record.idempotencyKey}`;
  run.row.error = message;
  run.changed();
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.ambiguousSubmission,
    nonRetryable: true,
    message,
    details: [{ idempotencyKey: record.idempotencyKey, step: run.stepId }],
  });
}
