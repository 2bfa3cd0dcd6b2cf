import { ApplicationFailure } from '@temporalio/workflow';
import { proxyReelflowActivities } from '../activity-proxy';
import type { ReelflowActivities } from '../../activities';
import type { ArchivedOutput } from '../../contract/archived-output';
import { dependenciesOf, specVersion } from '../../pipeline-spec/graph';
import { forEachReference } from '../../pipeline-spec/references';
import type { ArchiveMode, PipelineSpec } from '../../pipeline-spec/spec';
import { isOpStepOutput } from '../../pipeline-spec/steps/op-types';
import type { PipelineSummary, StepOutput } from '../pipeline-types';

/**
 * The output archive of a pipeline (docs/media-store.md): a completed step's outputs are copied into
 * the media store beside the next step, so that later steps and `reelflow outputs` do not depend on
 * the service keeping its files.
 */

const archiver = proxyReelflowActivities<ReelflowActivities>({
  // Copies stream whole videos; the activity heartbeats while it does.
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});

/** The archive mode of a spec: none without the field, as programmatic starts always had (the CLI fills it in). */
export function archiveModeOf(spec: Pick<PipelineSpec, 'archive'>): ArchiveMode {
  return spec.archive ?? 'never';
}

/**
 * Whether step `index`'s outputs are archived; `on-expiry-risk`: the outputs still needed after the
 * service may have deleted them (read by a later step, or the final step's).
 */
export function shouldArchive(spec: PipelineSpec, index: number): boolean {
  const mode = archiveModeOf(spec);
  if (mode !== 'on-expiry-risk') return mode === 'always';
  const id = spec.steps[index]?.id;
  // A graph's final outputs are those no step waits for; a step read later is one any other step reads.
  if (specVersion(spec) === 2) {
    const waitedFor = spec.steps.some((step) => step.id !== id && dependenciesOf(step).includes(id ?? ''));
    let read = false;
    for (const step of spec.steps) forEachReference(step.input, (reference) => (read ||= reference.$from === id));
    return read || !waitedFor;
  }
  if (index === spec.steps.length - 1) return true;
  let readLater = false;
  for (const later of spec.steps.slice(index + 1))
    forEachReference(later.input, (reference) => (readLater ||= reference.$from === id));
  return readLater;
}

/**
 * Copies a completed step's outputs when the spec asks (an item of a fan-out step: as `<step>-<item>`);
 * a failure does not fail the paid step (`archiveError`).
 */
export async function archiveOutputs(
  spec: PipelineSpec,
  index: number,
  output: StepOutput,
  item?: number,
): Promise<{ archived?: ArchivedOutput[]; archiveError?: string }> {
  // An operation's output is in the media store already (its row lists the copies), and an approval
  // gate's names media other steps made: nothing to copy.
  if (!('videos' in output) || isOpStepOutput(output) || !shouldArchive(spec, index)) return {};
  const id = spec.steps[index]?.id ?? '';
  const step = item === undefined ? id : `${id}-${item}`;
  try {
    return { archived: await archiver.archiveOutputs({ pipeline: spec.name, step, videos: output.videos }) };
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    return {
      archiveError:
        cause instanceof ApplicationFailure ? cause.message : error instanceof Error ? error.message : String(error),
    };
  }
}

/** What a `$from` reference to `url` resolves to: its archived copy (which keeps the URL), else the URL. */
export function archivedOrUrl(summary: PipelineSummary, url: string): string | ArchivedOutput {
  for (const step of summary.steps) {
    // An operation's output carries its stored copies, so a resumed run reads them too.
    const stored = (output: unknown) => (isOpStepOutput(output) ? output.archived : undefined);
    const rows = [step, ...(step.items ?? [])];
    for (const copies of rows.map((row) => row.archived ?? stored(row.output))) {
      const copy = copies?.find((a) => a.url === url);
      if (copy) return copy;
    }
  }
  return url;
}
