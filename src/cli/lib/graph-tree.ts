import { gateLines } from './approval-lines';
import type { StepItemSummary, StepRow, StepSummary } from '../../workflows/pipeline-types';
import { creditsText, joinColumns, stepColumns, type StepColumns } from './step-columns';
import { failedRequestLines, formatElapsed, stepElapsedMs, stepState, type StepView } from './step-view';

/**
 * A graph (a version-2 pipeline) for a person: an indented tree, each node once, under the node it
 * depends on. A node with several dependencies hangs under the last of them in the spec's order
 * (the one that finishes the wait, as far as the spec says) and names the others (`after: a, b`).
 * A fan-out node's items are its children (`[0] completed req_… 12.1s`); a waiting node says what
 * it waits for (`waiting for: dependencies | job | slot | person`).
 */

/** An item as the CLI reads it: items of newer workers may carry the step's clock fields too. */
type ItemView = StepItemSummary & Partial<Pick<StepRow, 'submittedAt' | 'finishedAt'>>;

/** A node of the drawn tree: the step, how deep it sits, and the dependencies it is not drawn under. */
interface PlacedStep {
  step: StepSummary;
  depth: number;
  after: string[];
}

/** Width of the name column of the flat version-1 list (`  ` + 12), kept as the tree's least. */
const NAME_WIDTH = 14;

/** The graph's lines, one per node then one per item, in tree order. */
export function graphLines(
  steps: readonly StepSummary[],
  now: number,
  observedMs: Record<string, number> = {},
  workflowId?: string,
): string[] {
  const placed = placeSteps(steps);
  const labels = placed.flatMap(({ step, depth }) => [
    indent(depth) + step.id,
    ...(step.items ?? []).map((item) => indent(depth + 1) + itemLabel(item)),
  ]);
  const width = Math.max(NAME_WIDTH, ...labels.map((label) => label.length));
  return placed.flatMap(({ step, depth, after }) => [
    joinColumns((indent(depth) + step.id).padEnd(width), nodeColumns(step, after, now, observedMs[step.id])),
    ...failedRequestLines(step as StepView),
    ...(workflowId === undefined ? [] : gateLines(step, workflowId)),
    ...(step.items ?? []).map((item) =>
      joinColumns((indent(depth + 1) + itemLabel(item)).padEnd(width), itemColumns(item, now)),
    ),
  ]);
}

/**
 * The steps in tree order (depth first, children in spec order), each once. A dependency that
 * names no step of the summary is ignored; a step whose chain never reaches a root (not possible
 * in a validated spec) is drawn at the top so nothing is lost.
 */
export function placeSteps(steps: readonly StepSummary[]): PlacedStep[] {
  const position = new Map(steps.map((step, index) => [step.id, index]));
  const parentOf = new Map<string, string>();
  const afterOf = new Map<string, string[]>();
  for (const step of steps) {
    const deps = (step.dependsOn ?? []).filter((id) => position.has(id) && id !== step.id);
    const parent = deps.reduce<string | undefined>(
      (last, id) => (last === undefined || (position.get(id) ?? 0) > (position.get(last) ?? 0) ? id : last),
      undefined,
    );
    if (parent !== undefined) parentOf.set(step.id, parent);
    afterOf.set(
      step.id,
      deps.filter((id) => id !== parent),
    );
  }
  const placed: PlacedStep[] = [];
  const seen = new Set<string>();
  const visit = (step: StepSummary, depth: number): void => {
    if (seen.has(step.id)) return;
    seen.add(step.id);
    placed.push({ step, depth, after: afterOf.get(step.id) ?? [] });
    for (const child of steps) if (parentOf.get(child.id) === step.id) visit(child, depth + 1);
  };
  for (const step of steps) if (!parentOf.has(step.id)) visit(step, 0);
  for (const step of steps) visit(step, 0);
  return placed;
}

function indent(depth: number): string {
  return '  '.repeat(depth + 1);
}

function itemLabel(item: StepItemSummary): string {
  return `[${item.index}]`;
}

/** A node's columns: a fan-out node counts its items (each item has its own line and request). */
function nodeColumns(step: StepSummary, after: string[], now: number, observedMs: number | undefined): StepColumns {
  const columns = stepColumns(step as StepView, now, observedMs);
  const notes = [
    ...(after.length ? [`after: ${after.join(', ')}`] : []),
    ...(step.waitingFor ? [`waiting for: ${step.waitingFor}`] : []),
    ...(columns.note ? [columns.note] : []),
  ];
  return { ...columns, request: requestColumn(step, columns.request), note: notes.join('; ') };
}

/** A fan-out node counts its items; a local step (an operation or a gate) that sent no request names its op. */
function requestColumn(step: StepSummary, request: string): string {
  if (step.items) return `${step.items.length} item${step.items.length === 1 ? '' : 's'}`;
  const op = (step as { op?: unknown }).op;
  return request === '-' && typeof op === 'string' ? `op: ${op}` : request;
}

/** An item's columns: its state, its last request, submit → end when known, credits, error. */
function itemColumns(item: ItemView, now: number): StepColumns {
  const elapsedMs = item.submittedAt === undefined ? undefined : stepElapsedMs(item as unknown as StepView, now);
  return {
    state: stepState(item as unknown as StepView),
    request: item.requestIds.at(-1) ?? '-',
    elapsed: elapsedMs === undefined ? '' : formatElapsed(elapsedMs),
    credits: creditsText(item.charged, item.refunded),
    note: item.carriedFrom ? `carried from run ${item.carriedFrom}` : '',
    error: item.error ? `  ${item.error}` : '',
  };
}
