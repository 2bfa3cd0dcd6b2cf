import type { DeliveryView, InjectedFault, JobView } from '../../src/local-service';
import type { PipelineSummary, StepSummary } from '../../src/workflows/pipeline-types';

/**
 * The strict criteria of the fault suite: each pipeline's end is explained from the faults the
 * service really injected (its journal, `GET /v1/admin/faults/injected`) and its own records (jobs,
 * deliveries), never from what the pipeline says about itself. Pure: the suite and its unit test feed it.
 */

/** One pipeline's end as the run saw it. */
export interface Outcome {
  name: string;
  summary: PipelineSummary | null;
  error: string | null;
}

/** A process killed during the run: when, and when its replacement was ready. */
export interface Kill {
  what: 'worker' | 'bridge' | 'service';
  at: number;
  back: number;
}

/** What the service's books show, read after the run. */
export interface ServiceBooks {
  jobs: JobView[];
  deliveries: DeliveryView[];
  faults: InjectedFault[];
}

export interface Explanations {
  /** One line per pipeline: its end and every fault on its path. */
  explained: string[];
  /** Every way a pipeline's end or records disagree with the service's books. Must be empty. */
  unexplained: string[];
}

const FAILED_BY_FAULT = new Set(['job_failed', 'service_restarted']);

/**
 * Explains every pipeline: per step, the service's jobs of the step's keys are exactly the step's
 * attempts (same ids and keys, same terminal states, same credits); every FAILED job is one the
 * service failed on purpose (injected failure or restart); a resubmit follows only such a failure; a
 * step ends failed only when its policy's attempts were all failed that way, otherwise completed; a
 * dropped answer was recovered onto its own job (same key retried, or adopted); an outcome learned by
 * webhook was delivered, one whose every delivery was dropped was learned by poll; the pipeline's
 * ledger is the net of its jobs. The pipeline's status is the one its steps' faults allow.
 */
export function explainOutcomes(
  outcomes: Outcome[],
  books: ServiceBooks,
  options: { maxResubmits: number; idempotency: 'honoured' | 'unknown'; kills: Kill[] },
): Explanations {
  const explained: string[] = [];
  const unexplained: string[] = [];
  const faultsOf = (requestId: string | undefined, key: string) =>
    books.faults.filter(
      (f) =>
        (requestId !== undefined && f.requestId === requestId) ||
        (f.requestId === null && f.idempotencyKey === key) ||
        (f.kind === 'submit_answer_dropped' && f.idempotencyKey === key),
    );
  for (const outcome of outcomes) {
    const label = outcome.name.replace(/^faults-[^-]+-\d+-\d+-/, '#');
    const problems: string[] = [];
    const lines: string[] = [];
    const s = outcome.summary;
    if (!s) {
      unexplained.push(`${label}: no summary (${outcome.error ?? 'no error'})`);
      continue;
    }
    let allowed: 'completed' | 'failed' = 'completed';
    let net = 0;
    for (const [index, step] of s.steps.entries()) {
      const previous = s.steps[index - 1];
      if (previous && previous.status !== 'completed') {
        if (step.requestIds.length > 0)
          problems.push(`${step.id} submitted after ${previous.id} ended ${previous.status}`);
        continue;
      }
      const r = explainStep(step, books, faultsOf, options);
      problems.push(...r.problems.map((p) => `${step.id}: ${p}`));
      lines.push(`${step.id}: ${r.story}`);
      net += r.net;
      if (r.failedByFault > options.maxResubmits) allowed = 'failed';
      if (r.failedByFault > options.maxResubmits || step.status !== 'completed') break;
    }
    if (s.status !== allowed) problems.push(`ended ${s.status}, its injected faults allow ${allowed}`);
    if (s.ledger.net !== net) problems.push(`ledger net ${s.ledger.net} ≠ the service's net ${net} for its jobs`);
    if (s.ledger.charged - s.ledger.refunded !== s.ledger.net)
      problems.push(`ledger does not add up: ${JSON.stringify(s.ledger)}`);
    explained.push(`${label} ${s.status}: ${lines.join('; ')}`);
    if (problems.length > 0) unexplained.push(`${label} (${s.status}): ${problems.join('; ')}`);
  }
  return { explained, unexplained };
}

function explainStep(
  step: StepSummary,
  books: ServiceBooks,
  faultsOf: (requestId: string | undefined, key: string) => InjectedFault[],
  options: { maxResubmits: number; idempotency: 'honoured' | 'unknown'; kills: Kill[] },
): { story: string; problems: string[]; failedByFault: number; net: number } {
  const problems: string[] = [];
  const story: string[] = [];
  const attempts = step.attemptLog ?? [];
  const stem = `reelflow:${step.stepKey}:`;
  const jobs = books.jobs.filter((j) => j.idempotencyKey?.startsWith(stem));
  const claimed = new Set(attempts.map((a) => a.requestId).filter((id): id is string => id !== undefined));
  for (const job of jobs)
    if (!claimed.has(job.id))
      problems.push(`service job ${job.id} (${job.status}, key ${job.idempotencyKey}) is in no attempt`);
  let failedByFault = 0;
  let net = 0;
  for (const [i, attempt] of attempts.entries()) {
    const job = jobs.find((j) => j.id === attempt.requestId);
    const faults = faultsOf(attempt.requestId, attempt.idempotencyKey);
    const notes = faults.map((f) => (f.kind === 'submit_error' ? `${f.status}` : f.kind.replace(/_/g, ' ')));
    if (!job) {
      problems.push(
        `attempt ${attempt.attempt} names request ${attempt.requestId ?? '(none)'} that the service has not under key ${attempt.idempotencyKey}`,
      );
      continue;
    }
    net += job.creditsCharged - job.creditsRefunded;
    if (job.idempotencyKey !== attempt.idempotencyKey)
      problems.push(`attempt ${attempt.attempt}: key ${attempt.idempotencyKey} ≠ the job's ${job.idempotencyKey}`);
    if (attempt.outcome !== job.status)
      problems.push(
        `attempt ${attempt.attempt}: recorded ${attempt.outcome ?? 'no outcome'}, the service says ${job.status}`,
      );
    if (attempt.charged !== job.creditsCharged || attempt.refunded !== job.creditsRefunded) {
      problems.push(
        `attempt ${attempt.attempt}: charged/refunded ${attempt.charged}/${attempt.refunded}, the service's ${job.creditsCharged}/${job.creditsRefunded}`,
      );
    }
    const dropped = faults.find((f) => f.kind === 'submit_answer_dropped');
    if (dropped && dropped.requestId !== job.id)
      problems.push(`attempt ${attempt.attempt}: the dropped answer's job ${dropped.requestId} was not the one kept`);
    if (dropped && options.idempotency === 'unknown' && !attempt.adopted)
      problems.push(
        `attempt ${attempt.attempt}: a dropped answer in unknown mode must be adopted by an operator decision`,
      );
    if (job.status === 'FAILED') {
      const cause = faults.find((f) => f.requestId === job.id && FAILED_BY_FAULT.has(f.kind));
      if (!cause)
        problems.push(
          `attempt ${attempt.attempt}: job ${job.id} FAILED (${job.error?.code ?? '?'}) without an injected failure or restart`,
        );
      else failedByFault += 1;
    } else if (i < attempts.length - 1) {
      problems.push(`attempt ${attempt.attempt}: resubmitted after a ${job.status} job`);
    }
    const deliveries = books.deliveries.filter((d) => d.requestId === job.id);
    if (attempt.learnedBy === 'webhook' && !deliveries.some((d) => d.attempts > 0 && d.state !== 'dropped'))
      problems.push(`attempt ${attempt.attempt}: learned by a webhook the service never sent`);
    if (attempt.learnedBy === 'webhook' && deliveries.length > 0 && deliveries.every((d) => d.state === 'dropped'))
      problems.push(`attempt ${attempt.attempt}: learned by webhook, but every delivery was dropped`);
    story.push(
      `${job.status}${notes.length > 0 ? ` [${notes.join(', ')}]` : ''} by ${attempt.learnedBy ?? '?'}${attempt.adopted ? ' (adopted)' : ''}`,
    );
  }
  const last = attempts[attempts.length - 1];
  const lastJob = jobs.find((j) => j.id === last?.requestId);
  if (step.status === 'completed' && lastJob?.status !== 'COMPLETED')
    problems.push(`completed, but its last job is ${lastJob?.status ?? 'missing'}`);
  if (step.status === 'failed' && !(failedByFault === options.maxResubmits + 1 && lastJob?.status === 'FAILED')) {
    problems.push(
      `failed after ${failedByFault} injected failure(s); the policy allows ${options.maxResubmits} resubmit(s)`,
    );
  }
  if (step.status !== 'completed' && step.status !== 'failed') problems.push(`ended ${step.status}`);
  if (step.charged - step.refunded !== net)
    problems.push(`step ledger ${step.charged}-${step.refunded} ≠ the service's net ${net}`);
  return { story: story.join(' → ') || 'no job', problems, failedByFault, net };
}

/**
 * Each kill must have hit work in flight, by the service's records: a job submitted and not yet
 * terminal at the kill instant; for the bridge also a delivery due while it was down (a job that
 * ended in the outage with a delivery that was not dropped).
 */
export function killsWithoutWork(kills: Kill[], books: ServiceBooks): string[] {
  const misses: string[] = [];
  for (const kill of kills) {
    const inFlight = books.jobs.filter(
      (j) => j.submittedAt <= kill.at && (j.completedAt === null || j.completedAt > kill.at),
    );
    if (inFlight.length === 0)
      misses.push(`${kill.what} killed at ${new Date(kill.at).toISOString()} with no job in flight`);
    if (kill.what === 'bridge') {
      const due = books.deliveries.filter(
        (d) => d.state !== 'dropped' && d.createdAt >= kill.at && d.createdAt <= kill.back,
      );
      if (due.length === 0)
        misses.push(
          `bridge down ${new Date(kill.at).toISOString()}–${new Date(kill.back).toISOString()} with no delivery due`,
        );
    }
  }
  return misses;
}

/** Jobs in flight at each kill (for the printed figures). */
export function workAtKills(kills: Kill[], books: ServiceBooks): Record<string, number[]> {
  const work: Record<string, number[]> = {};
  for (const kill of kills) {
    (work[kill.what] ??= []).push(
      books.jobs.filter((j) => j.submittedAt <= kill.at && (j.completedAt === null || j.completedAt > kill.at)).length,
    );
  }
  return work;
}
