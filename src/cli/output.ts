import type { BatchProgress } from '../workflows/batch-types';
import type { PipelineSummary, StepSummary } from '../workflows/pipeline-types';

/**
 * Rendering for people (progress lines, bars) and for scripts (`--json`: one JSON document on stdout,
 * nothing else there; messages go to stderr).
 */

/** Writes one JSON document to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes a line for a person: stdout normally, stderr when stdout carries JSON. */
export function say(line: string, json = false): void {
  (json ? process.stderr : process.stdout).write(`${line}\n`);
}

/** `12.3s` / `2m05s`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${String(Math.floor(seconds % 60)).padStart(2, '0')}s`;
}

/** One line per step: id, model, state, request id, credits. */
export function stepLine(step: StepSummary, elapsedMs?: number): string {
  const request = step.requestIds.at(-1) ?? '-';
  const credits = step.charged > 0 ? `${step.charged - step.refunded} credits${step.refunded ? ` (refunded ${step.refunded})` : ''}` : step.quoted ? `quoted ${step.quoted}` : '';
  const error = step.error ? `  ${step.error}` : '';
  const elapsed = elapsedMs === undefined ? '' : formatElapsed(elapsedMs);
  return `  ${step.id.padEnd(12)} ${step.status.padEnd(18)} ${request.padEnd(26)} ${elapsed.padEnd(8)} ${credits}${error}`;
}

/** The whole pipeline as lines (header, steps, ledger). */
export function pipelineLines(summary: PipelineSummary, workflowId: string, elapsedMs?: number, stepElapsedMs: Record<string, number> = {}): string[] {
  const elapsed = elapsedMs === undefined ? '' : `  elapsed ${formatElapsed(elapsedMs)}`;
  const { ledger } = summary;
  return [
    `${workflowId}: ${summary.status}${summary.currentStep ? ` (step ${summary.currentStep})` : ''}${elapsed}`,
    ...summary.steps.map((step) => stepLine(step, stepElapsedMs[step.id])),
    `  credits: charged ${ledger.charged}, refunded ${ledger.refunded}, net ${ledger.net}${summary.budgetCredits !== null ? ` of budget ${summary.budgetCredits}` : ''}`,
    ...(summary.error ? [`  error: ${summary.error}`] : []),
  ];
}

/** Fingerprint of what a person sees, so progress is printed only when something changed. */
export function progressKey(summary: PipelineSummary): string {
  return JSON.stringify([summary.status, summary.currentStep, summary.steps.map((s) => [s.status, s.requestIds.length, s.charged, s.refunded])]);
}

/** `[#####.....] 3/10 completed 2 failed 1 cancelled 0 running 2`. */
export function batchBar(progress: BatchProgress, width = 30): string {
  const done = progress.completed + progress.failed + progress.cancelled + progress.skipped;
  const total = Math.max(progress.total, 1);
  const filled = Math.round((done / total) * width);
  const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
  return `[${bar}] ${done}/${progress.total}  completed ${progress.completed}  failed ${progress.failed}  cancelled ${progress.cancelled}  skipped ${progress.skipped}  running ${progress.running.length}`;
}

/** Per-item lines of a batch. */
export function batchLines(progress: BatchProgress, workflowId: string): string[] {
  return [
    `${workflowId}: ${progress.status}`,
    batchBar(progress),
    ...progress.results.map((r) => `  ${r.name.padEnd(24)} ${r.status.padEnd(10)} ${r.ledger ? `net ${r.ledger.net} credits` : ''}${r.error ? `  ${r.error}` : ''}`),
  ];
}
