import { dependenciesOf } from '../../pipeline-spec/graph';
import type { PipelineStep } from '../../pipeline-spec/spec';
import type { StepItemSummary, StepOutput, StepPhase, StepSummary, WaitingFor } from '../pipeline-types';
import type { StepProgress } from '../steps/kind';

/**
 * How a graph (a version-2 spec) shows its steps in the summary: each row's dependencies and what
 * it waits for, a fan-out step's items (each its own job) and their sum in the step's row. Version-1
 * rows never pass through here, so they stay as they were.
 */

/** What the pipeline keeps of an item, as ../pipeline-state.ts hands it over. */
interface ItemView extends Pick<
  StepItemSummary,
  'status' | 'output' | 'archived' | 'archiveError' | 'error' | 'carriedFrom'
> {
  progress?: StepProgress;
}

/** The row of a graph's step: its dependencies and, for a fan-out step, its items and their sums. */
export function graphRowOf(step: PipelineStep, row: StepSummary, items: readonly ItemView[] | undefined): StepSummary {
  const shown: StepSummary = { ...row, dependsOn: dependenciesOf(step) };
  if (!items) return shown;
  const views = items.map((item, index) => itemRowOf(item, index));
  const sum = (field: 'charged' | 'refunded' | 'quoted' | 'polls' | 'attempts') =>
    views.reduce((total, view) => total + view.progress[field], 0);
  delete shown.output;
  delete shown.attemptLog;
  return {
    ...shown,
    requestIds: views.flatMap((view) => view.row.requestIds),
    attempts: sum('attempts'),
    quoted: sum('quoted'),
    charged: sum('charged'),
    refunded: sum('refunded'),
    polls: sum('polls'),
    items: views.map((view) => view.row),
  };
}

function itemRowOf(item: ItemView, index: number) {
  const { progress, ...own } = item;
  const view = progress?.view() ?? {};
  const progressOf = {
    charged: view.charged ?? 0,
    refunded: view.refunded ?? 0,
    quoted: view.quoted ?? 0,
    polls: view.polls ?? 0,
    attempts: view.attempts ?? 0,
  };
  const output = own.output ?? (own.status === 'completed' ? view.output : undefined);
  const row: StepItemSummary = {
    index,
    ...(view.phase && own.status === 'running' ? { phase: view.phase } : {}),
    requestIds: view.requestIds ?? [],
    charged: progressOf.charged,
    refunded: progressOf.refunded,
    ...own,
    ...(output ? { output } : {}),
  };
  return { row, progress: progressOf };
}

/** Writes what each pending or running step of a graph waits for (`waitingFor`). */
export function showWaits(specSteps: readonly PipelineStep[], rows: StepSummary[]): void {
  const done = new Set(rows.filter((row) => row.status === 'completed').map((row) => row.id));
  rows.forEach((row, index) => {
    const step = specSteps[index] as PipelineStep;
    let waiting: WaitingFor | undefined;
    if (row.status === 'pending' && dependenciesOf(step).some((id) => !done.has(id))) waiting = 'dependencies';
    if (row.status === 'running') {
      const phases = row.items ? row.items.flatMap((item) => (item.phase ? [item.phase] : [])) : [row.phase];
      waiting = waitOf(phases);
    }
    if (waiting) row.waitingFor = waiting;
  });
}

/** Phases in which running work waits for a person: a decision on an ambiguous submit, an approval, a batch's resume. */
const PERSON_PHASES: readonly StepPhase[] = ['ambiguous', 'person', 'paused'];

/**
 * What running work in `phases` (the phases the steps set, or a fan-out's items) waits for: a person
 * before anything else (a paused batch item waits for `reelflow batch resume` after a top-up), then one
 * of the account's slots, then the job.
 */
function waitOf(phases: readonly (StepPhase | undefined)[]): WaitingFor | undefined {
  if (phases.some((phase) => phase !== undefined && PERSON_PHASES.includes(phase))) return 'person';
  if (phases.includes('slot')) return 'slot';
  return phases.some((phase) => phase !== undefined && phase !== 'done') ? 'job' : undefined;
}

/** Fan-out step id → the outputs of its completed items in item order (what a `[*]` reference reads). */
export function itemOutputsOf(rows: readonly StepSummary[]): Record<string, StepOutput[]> {
  return Object.fromEntries(
    rows.flatMap((row) =>
      row.items && row.status === 'completed'
        ? [[row.id, row.items.flatMap((item) => (item.status === 'completed' && item.output ? [item.output] : []))]]
        : [],
    ),
  );
}
