import type { ArchivedOutput } from '../../contract';
import type { PipelineSummary, StepSummary } from '../../workflows/pipeline-types';

/**
 * Which files `reelflow outputs` writes for a pipeline, and under which names (without extension;
 * the extension comes from the URL or the content type once known).
 *
 * Version 1 keeps its names: `<step>-<n>` for the n-th file of each step (from 1; a job's are videos).
 * A graph (version 2) names files by node and item: a node's one output is `<step>` (`cut`,
 * `upscale`, an image `frame`), a fan-out item's is `<step>-<item>` (`scenes-0` … `scenes-3`); a
 * node or item with several files adds `-<n>` from 1 (`cut-1`, `scenes-0-2`). Videos come before
 * images. A name already taken (a step id that looks like another's item) gets `_2`, `_3`, ….
 */

/** One output file to write. */
export interface OutputTarget {
  step: string;
  /** The fan-out item it belongs to. */
  item?: number;
  /** File name without extension. */
  name: string;
  url: string;
  /** The content type the output reported, if any. */
  contentType?: string;
  /** The media-store copy of this URL, when archived. */
  copy?: ArchivedOutput;
}

/** A file of an output as read loosely: jobs give `videos`, operations `videos` or `images`. */
interface OutputFile {
  url: string;
  content_type?: string;
}

/** Every output file of the pipeline, in step order (items in item order). */
export function outputTargets(summary: PipelineSummary): OutputTarget[] {
  const targets = summary.version === 2 ? graphTargets(summary) : chainTargets(summary);
  const taken = new Set<string>();
  return targets.map((target) => {
    let name = target.name;
    for (let n = 2; taken.has(name); n += 1) name = `${target.name}_${n}`;
    taken.add(name);
    return { ...target, name };
  });
}

function chainTargets(summary: PipelineSummary): OutputTarget[] {
  return summary.steps.flatMap((step) => {
    const output = summary.outputs[step.id];
    return filesOf(output).map((file, index) =>
      target(step.id, undefined, `${step.id}-${index + 1}`, file, step.archived ?? archivedOf(output)),
    );
  });
}

function graphTargets(summary: PipelineSummary): OutputTarget[] {
  return summary.steps.flatMap((step) => {
    if (step.items)
      return step.items.flatMap((item) =>
        item.status === 'completed'
          ? named(step.id, item.index, `${step.id}-${item.index}`, filesOf(item.output), item.archived)
          : [],
      );
    const output = summary.outputs[step.id] ?? step.output;
    return named(step.id, undefined, step.id, filesOf(output), step.archived ?? archivedOf(output));
  });
}

function named(
  step: string,
  item: number | undefined,
  stem: string,
  files: OutputFile[],
  archived: ArchivedOutput[] | undefined,
): OutputTarget[] {
  return files.map((file, index) =>
    target(step, item, files.length === 1 ? stem : `${stem}-${index + 1}`, file, archived),
  );
}

function target(
  step: string,
  item: number | undefined,
  name: string,
  file: OutputFile,
  archived: ArchivedOutput[] | undefined,
): OutputTarget {
  const copy = archived?.find((a) => a.url === file.url);
  return {
    step,
    ...(item === undefined ? {} : { item }),
    name,
    url: file.url,
    ...(file.content_type ? { contentType: file.content_type } : {}),
    ...(copy ? { copy } : {}),
  };
}

/** Videos, then images, of a step's output (an approval's output has neither). */
function filesOf(output: unknown): OutputFile[] {
  return [...listOf(output, 'videos'), ...listOf(output, 'images')];
}

function listOf(output: unknown, field: 'videos' | 'images'): OutputFile[] {
  const list = typeof output === 'object' && output !== null ? (output as Record<string, unknown>)[field] : undefined;
  return Array.isArray(list)
    ? list.filter((file): file is OutputFile => typeof (file as OutputFile | null)?.url === 'string')
    : [];
}

/** An operation's output carries its media-store copies beside its files. */
function archivedOf(output: unknown): ArchivedOutput[] | undefined {
  const archived = typeof output === 'object' && output !== null ? (output as StepSummary).archived : undefined;
  return Array.isArray(archived) ? archived : undefined;
}
