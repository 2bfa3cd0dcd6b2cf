import type { BatchProgress } from '../../workflows/batch-types';
import type { PipelineSummary, StepSummary } from '../../workflows/pipeline-types';
import { failedRequestLines, formatElapsed, stepState, waitingNote, type StepView } from './step-view';
import { joinColumns, stepColumns } from './step-columns';
import { graphLines } from './graph-tree';
import { batchStatusLines } from '../../pipeline-spec/ui-text';
import { gateLines } from './approval-lines';

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

/**
 * One line per step: id, state, request id, elapsed (submit → terminal), credits, error; a waiting
 * step adds how long nothing changed and when the next poll is due; each failed request adds a line.
 * `observedMs` is the elapsed time as seen by a follower, for pipelines that do not report times.
 */
export function stepLines(step: StepSummary, now: number = Date.now(), observedMs?: number): string[] {
  const view = step as StepView;
  return [joinColumns(`  ${step.id.padEnd(12)}`, stepColumns(view, now, observedMs)), ...failedRequestLines(view)];
}

/** The whole pipeline as lines (header, steps, ledger); a graph's steps as a tree (./graph-tree.ts). */
export function pipelineLines(
  summary: PipelineSummary,
  workflowId: string,
  elapsedMs?: number,
  stepElapsedMs: Record<string, number> = {},
  now: number = Date.now(),
): string[] {
  const elapsed = elapsedMs === undefined ? '' : `  elapsed ${formatElapsed(elapsedMs)}`;
  const { ledger } = summary;
  return [
    `${workflowId}: ${summary.status}${summary.currentStep ? ` (step ${summary.currentStep})` : ''}${elapsed}`,
    ...(summary.version === 2
      ? graphLines(summary.steps, now, stepElapsedMs, workflowId)
      : summary.steps.flatMap((step) => [
          ...stepLines(step, now, stepElapsedMs[step.id]),
          ...gateLines(step, workflowId),
        ])),
    `  credits: charged ${ledger.charged}, refunded ${ledger.refunded}, net ${ledger.net}${summary.budgetCredits !== null ? ` of budget ${summary.budgetCredits}` : ''}`,
    ...(summary.error ? [`  error: ${summary.error}`] : []),
  ];
}

/** Fingerprint of what a person sees, so progress is printed only when something changed. */
export function progressKey(summary: PipelineSummary): string {
  return JSON.stringify([
    summary.status,
    summary.currentStep,
    summary.steps.map((s) => {
      const view = s as StepView;
      return [
        s.status,
        view.phase,
        s.requestIds.length,
        s.charged,
        s.refunded,
        view.attemptLog?.map((r) => r.outcome ?? ''),
        view.nextPollAt,
        // A graph's node also changes when what it waits for or one of its items does.
        ...(s.waitingFor || s.items
          ? [s.waitingFor, s.items?.map((item) => [item.status, item.phase, item.requestIds.length, item.charged])]
          : []),
      ];
    }),
  ]);
}

/** One line per running step, for a follower to print while nothing changes (a graph's: what it waits for). */
export function waitingLines(summary: PipelineSummary, now: number = Date.now()): string[] {
  return summary.steps.flatMap((step) => {
    // A graph's running node also says what it waits for (a person or a slot has no poll to announce).
    const waits = step.status === 'running' && step.waitingFor ? `waiting for ${step.waitingFor}` : '';
    const note = [waits, waitingNote(step as StepView, now)].filter(Boolean).join(', ');
    return note ? [`  ${step.id.padEnd(12)} ${stepState(step as StepView)}: ${note}`] : [];
  });
}

/** `[#####.....] 3/10 completed 2 failed 1 cancelled 0 running 2`. */
export function batchBar(progress: BatchProgress, width = 30): string {
  const done = progress.completed + progress.failed + progress.cancelled + progress.skipped;
  const total = Math.max(progress.total, 1);
  const filled = Math.round((done / total) * width);
  const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
  return `[${bar}] ${done}/${progress.total}  completed ${progress.completed}  failed ${progress.failed}  cancelled ${progress.cancelled}  skipped ${progress.skipped}  running ${progress.running.length}`;
}

/** Item lines a batch's summary prints at most (failures first); the rest are counted. */
const BATCH_ITEM_LINES = 50;

/**
 * A batch for a person: state, bar, counts by state, items/s, ETA and credits, then one line per item
 * result given (`progress.results`: failures first, at most BATCH_ITEM_LINES).
 */
export function batchLines(progress: BatchProgress, workflowId: string, now: number = Date.now()): string[] {
  const rank = (status: string) => (status === 'failed' ? 0 : status === 'completed' ? 2 : 1);
  const results = [...progress.results].sort((a, b) => rank(a.status) - rank(b.status));
  const shown = results.slice(0, BATCH_ITEM_LINES);
  return [
    `${workflowId}: ${progress.status}${progress.rerunOf ? ` (re-run of ${progress.rerunOf})` : ''}`,
    batchBar(progress),
    ...(progress.startedAt !== undefined ? batchStatusLines(progress, now) : []),
    ...shown.map(
      (r) =>
        `  ${r.name.padEnd(24)} ${r.status.padEnd(10)} ${r.ledger ? `net ${r.ledger.net} credits` : ''}${r.error ? `  ${r.error}` : ''}`,
    ),
    ...(results.length > shown.length ? [`  … and ${results.length - shown.length} more item(s)`] : []),
  ];
}
