import type { ArchivedOutput } from '../media/reference';
import type { PipelineSummary, StepItemSummary, StepSummary } from '../workflows/pipeline-types';
import { fetchImage, fetchVideo, placeVideo, type FetchOptions, type FetchedVideo, type MediaPlacement } from './media';
import type { ReportImage, ReportItem, ReportStep } from './model';

/**
 * What a graph (a version-2 pipeline) adds to its report: each node's images (an operation's frame),
 * each fan-out item with its own players, the node's dependencies, and the nodes in graph order
 * (each after the nodes it depends on; otherwise in the spec's order). Version-1 reports never pass
 * through here.
 */

/** A file of an output as read loosely: jobs give `videos`, operations `videos` or `images`. */
interface OutputFile {
  url: string;
  file_name?: string;
  content_type?: string;
}

/** One item as fetched: its videos wait for the report's placement, its images are embedded. */
interface FetchedItem {
  item: StepItemSummary;
  videos: FetchedVideo[];
  images: ReportImage[];
}

/** A graph's extra media per step id. */
export interface GraphMedia {
  images: Map<string, ReportImage[]>;
  items: Map<string, FetchedItem[]>;
  /** Every fetched item video, for the page's embed-or-beside decision. */
  videos: FetchedVideo[];
}

/** Fetches every node's images and every item's outputs (archived copies first). */
export async function fetchGraphMedia(summary: PipelineSummary, options: FetchOptions): Promise<GraphMedia> {
  const media: GraphMedia = { images: new Map(), items: new Map(), videos: [] };
  const stem = (step: string) => `${safeName(summary.name)}-${safeName(step)}`;
  for (const step of summary.steps) {
    const output = summary.outputs[step.id] ?? step.output;
    media.images.set(step.id, await images(listOf(output, 'images'), step.archived, stem(step.id), options));
    if (!step.items) continue;
    const fetched: FetchedItem[] = [];
    for (const item of step.items) {
      const name = `${stem(step.id)}-${item.index}`;
      const videos: FetchedVideo[] = [];
      for (const [n, file] of listOf(item.output, 'videos').entries())
        videos.push(await fetchVideo(sourceOf(file, item.archived, 'video/mp4'), `${name}-${n + 1}`, options));
      media.videos.push(...videos);
      fetched.push({ item, videos, images: await images(listOf(item.output, 'images'), item.archived, name, options) });
    }
    media.items.set(step.id, fetched);
  }
  return media;
}

/** The report's steps in graph order, each with its dependencies, images and items added. */
export function graphSteps(
  steps: readonly ReportStep[],
  summarySteps: readonly StepSummary[],
  media: GraphMedia,
  where: MediaPlacement,
): ReportStep[] {
  const rows = new Map(summarySteps.map((row) => [row.id, row]));
  const shown = steps.map((step): ReportStep => {
    const items = media.items.get(step.id);
    const images = media.images.get(step.id) ?? [];
    const imageUrls = new Set(images.map((image) => image.url));
    return {
      ...step,
      // An image is shown once, as an image, even where the step's videos list it too.
      videos: step.videos.filter((video) => !imageUrls.has(video.url)),
      dependsOn: rows.get(step.id)?.dependsOn ?? [],
      images,
      ...(items ? { items: items.map((fetched) => reportItem(fetched, where)) } : {}),
    };
  });
  return graphOrder(shown);
}

/** Each step after the steps it depends on, otherwise in the given order (a dependency cycle keeps the given order). */
export function graphOrder<T extends { id: string; dependsOn?: string[] }>(steps: readonly T[]): T[] {
  const ids = new Set(steps.map((step) => step.id));
  const placed = new Set<string>();
  const ordered: T[] = [];
  while (ordered.length < steps.length) {
    const ready =
      steps.find((s) => !placed.has(s.id) && (s.dependsOn ?? []).every((d) => placed.has(d) || !ids.has(d))) ??
      (steps.find((s) => !placed.has(s.id)) as T);
    placed.add(ready.id);
    ordered.push(ready);
  }
  return ordered;
}

function reportItem({ item, videos, images }: FetchedItem, where: MediaPlacement): ReportItem {
  return {
    index: item.index,
    status: item.status,
    requestIds: item.requestIds,
    ...(item.error ? { error: item.error } : {}),
    videos: videos.map((video) => placeVideo(video, where)),
    images,
  };
}

async function images(
  files: OutputFile[],
  archived: readonly ArchivedOutput[] | undefined,
  name: string,
  options: FetchOptions,
): Promise<ReportImage[]> {
  const fetched: ReportImage[] = [];
  for (const [n, file] of files.entries())
    fetched.push(await fetchImage(sourceOf(file, archived, 'image/png'), `${name}-image-${n + 1}`, options));
  return fetched;
}

function sourceOf(file: OutputFile, archived: readonly ArchivedOutput[] | undefined, type: string) {
  const copy = archived?.find((a) => a.url === file.url);
  return {
    url: file.url,
    fileName: file.file_name ?? (new URL(file.url).pathname.split('/').pop() || 'output'),
    contentType: file.content_type ?? copy?.type ?? type,
    ...(copy ? { archived: copy } : {}),
  };
}

function listOf(output: unknown, field: 'videos' | 'images'): OutputFile[] {
  const list = typeof output === 'object' && output !== null ? (output as Record<string, unknown>)[field] : undefined;
  return Array.isArray(list)
    ? list.filter((file): file is OutputFile => typeof (file as OutputFile | null)?.url === 'string')
    : [];
}

function safeName(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'x';
}
