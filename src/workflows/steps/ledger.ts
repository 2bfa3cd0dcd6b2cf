import { metricMeter } from '@temporalio/workflow';
import type { StepRun } from './step-run';

/** Folds a step's attempts and quote into its summary row. */
export function foldStep(run: StepRun): void {
  const { row, attempts } = run;
  row.requestIds = attempts.flatMap((a) => (a.requestId ? [a.requestId] : []));
  row.attempts = attempts.length;
  row.quoted = run.quote.credits ?? 0;
  row.charged = attempts.reduce((sum, a) => sum + a.charged, 0);
  row.refunded = attempts.reduce((sum, a) => sum + a.refunded, 0);
  if (run.quote.error !== undefined) row.quoteError = run.quote.error;
}

/**
 * Step outcomes and credits through the SDK's metric meter (the SDK drops workflow metrics during
 * replay, so each outcome counts once). The series keep the names and help texts they had when each
 * step ran as a job workflow of its own: dashboards and alerts read them.
 */
export function recordOutcome(run: StepRun, outcome: string): void {
  foldStep(run);
  metricMeter
    .createCounter('reelflow_jobs', 'jobs', 'Job workflows finished, by model and outcome.')
    .add(1, { model: run.model, outcome });
  if (run.row.charged > 0)
    metricMeter
      .createCounter('reelflow_credits_charged', 'credits', 'Credits charged by job workflows, by model.')
      .add(run.row.charged, { model: run.model });
  if (run.row.refunded > 0)
    metricMeter
      .createCounter('reelflow_credits_refunded', 'credits', 'Credits refunded to job workflows, by model.')
      .add(run.row.refunded, { model: run.model });
}
