import type { JobResult } from '../contract';
import type { ArchivedOutput } from '../media/reference';
import type { BatchItemResult, BatchProgress } from '../workflows/batch-types';
import type { PipelineSummary, StepOutput, StepSummary } from '../workflows/pipeline-types';
import {
  fetchVideo,
  placeVideo,
  type FetchOptions,
  type FetchedVideo,
  type MediaPlacement,
  type VideoSource,
} from './media';
import type { BatchReport, BatchReportItem, PipelineReport, ReportCredits, ReportStep, ReportVideo } from './model';
import { stepTimings, type StepTimestamps } from './timings';
import { isOpStepOutput } from '../pipeline-spec/steps/op-types';
import { fetchGraphMedia, graphSteps } from './graph';
import { reportApproval } from './approval';

/** What the report needs to know about the workflow besides its summary. */
export interface WorkflowFacts {
  workflowId: string;
  startedAt: Date | null;
  closedAt: Date | null;
  /** Link to the workflow in the Temporal UI, when its address is known. */
  temporalUiUrl?: string;
}

export interface CollectOptions extends FetchOptions {
  /** Videos up to this many bytes in total go inside the page; past it they are written beside it. */
  embedLimitBytes: number;
  /** The directory for media written beside the page, and the page's own directory. */
  mediaDir: string;
  pageDir: string;
  now?: () => Date;
}

/**
 * An output as the report reads it: the service URL, and the archived copy in the media store when
 * the pipeline archived it (the step's `archived`, matched by URL), which is read first. An
 * operation's files (a frame's image too) are in the store already: their copies come with them.
 */
export function videoSources(result: JobResult | undefined, archived: readonly ArchivedOutput[] = []): VideoSource[] {
  const op = isOpStepOutput(result) ? result : undefined;
  const copies = archived.length > 0 ? archived : (op?.archived ?? []);
  return [...(result?.videos ?? []), ...(op?.images ?? [])].map((video) => {
    const copy = copies.find((a) => a.url === video.url);
    return {
      url: video.url,
      fileName: video.file_name,
      contentType: video.content_type,
      ...(copy ? { archived: copy } : {}),
    };
  });
}

function credits(step: Pick<StepSummary, 'quoted' | 'charged' | 'refunded'>): ReportCredits {
  return { quoted: step.quoted, charged: step.charged, refunded: step.refunded, net: step.charged - step.refunded };
}

function placement(fetched: FetchedVideo[], options: CollectOptions): MediaPlacement {
  const total = fetched.reduce((sum, f) => sum + (f.file ? f.video.bytes : 0), 0);
  return total <= options.embedLimitBytes
    ? { mode: 'embed' }
    : { mode: 'beside', dir: options.mediaDir, relativeTo: options.pageDir };
}

/** Fetches every output of the pipeline, probes it, extracts posters and builds the report. */
export async function collectPipelineReport(
  summary: PipelineSummary,
  facts: WorkflowFacts,
  options: CollectOptions,
): Promise<PipelineReport> {
  const fetchedBySteps: FetchedVideo[][] = [];
  for (const step of summary.steps) {
    const sources = videoSources(jobResultOf(summary.outputs[step.id] ?? step.output), step.archived);
    const fetched: FetchedVideo[] = [];
    for (const [index, source] of sources.entries())
      fetched.push(await fetchVideo(source, `${safeName(summary.name)}-${safeName(step.id)}-${index + 1}`, options));
    fetchedBySteps.push(fetched);
  }
  const graph = summary.version === 2 ? await fetchGraphMedia(summary, options) : null;
  const where = placement([...fetchedBySteps.flat(), ...(graph?.videos ?? [])], options);
  const timings = stepTimings(
    summary.steps.map((step) => ({
      times: step as StepSummary & StepTimestamps,
      inferenceSeconds: jobResultOf(summary.outputs[step.id] ?? step.output)?.timings?.inference_seconds ?? null,
    })),
    facts.startedAt?.getTime() ?? null,
  );
  const placed = fetchedBySteps.map((fetched) => fetched.map((f) => placeVideo(f, where)));
  const steps: ReportStep[] = summary.steps.map((step, index) => ({
    id: step.id,
    model: 'model' in step ? step.model : step.op === 'approval' ? 'approval' : `${step.op} (local operation)`,
    status: step.status,
    requestIds: step.requestIds,
    attempts: step.attempts,
    credits: credits(step),
    timings: timings[index] ?? { queuedSeconds: null, renderingSeconds: null, handoffSeconds: null },
    ...(step.error ? { error: step.error } : {}),
    videos: placed[index] ?? [],
  }));
  steps.forEach((row, index) => {
    const approval = reportApproval(summary.steps[index] as StepSummary, placed.flat());
    if (approval) row.approval = approval;
  });
  return {
    kind: 'pipeline',
    name: summary.name,
    workflowId: facts.workflowId,
    status: summary.status,
    budgetCredits: summary.budgetCredits,
    ledger: { ...summary.ledger },
    startedAt: facts.startedAt?.toISOString() ?? null,
    closedAt: facts.closedAt?.toISOString() ?? null,
    ...(summary.error ? { error: summary.error } : {}),
    ...(graph ? { version: 2 as const, steps: graphSteps(steps, summary.steps, graph, where) } : { steps }),
    ...(facts.temporalUiUrl ? { temporalUiUrl: facts.temporalUiUrl } : {}),
    generatedAt: (options.now?.() ?? new Date()).toISOString(),
  };
}

/** A finished item's final output as its result names it (a large batch reads no pipeline summaries). */
function resultSource(result: BatchItemResult): VideoSource | undefined {
  if (result.status !== 'completed' || !result.finalOutputUrl) return undefined;
  const copy = result.finalOutput;
  return {
    url: result.finalOutputUrl,
    fileName: copy?.file_name ?? (new URL(result.finalOutputUrl).pathname.split('/').pop() || 'output.mp4'),
    contentType: copy?.type ?? 'video/mp4',
    ...(copy ? { archived: copy } : {}),
  };
}

/**
 * A batch item with the summary of its pipeline (null for items that never started, and for the
 * finished items of a large batch: their results carry the final output).
 */
export interface BatchItemInput {
  result: BatchItemResult;
  summary: PipelineSummary | null;
  temporalUiUrl?: string;
}

/** The gallery: per pipeline its last step's output (fetched, probed, poster), plus totals. */
export async function collectBatchReport(
  progress: BatchProgress,
  workflowId: string,
  items: BatchItemInput[],
  options: CollectOptions,
): Promise<BatchReport> {
  const fetched: Array<FetchedVideo | null> = [];
  for (const item of items) {
    const last = item.summary?.steps.at(-1);
    const source = last
      ? videoSources(jobResultOf(item.summary?.outputs[last.id] ?? last.output), last.archived)[0]
      : resultSource(item.result);
    fetched.push(source ? await fetchVideo(source, `${safeName(item.result.name)}-final`, options) : null);
  }
  const where = placement(
    fetched.flatMap((f) => (f ? [f] : [])),
    options,
  );
  const cards: BatchReportItem[] = items.map((item, index) => {
    const f = fetched[index];
    const video: ReportVideo | null = f ? placeVideo(f, where) : null;
    return {
      name: item.result.name,
      workflowId: item.result.workflowId,
      status: item.summary?.status === 'running' ? 'running' : item.result.status,
      ledger: item.result.ledger
        ? {
            quoted: item.result.ledger.quoted,
            charged: item.result.ledger.charged,
            refunded: item.result.ledger.refunded,
            net: item.result.ledger.net,
          }
        : item.summary
          ? { ...item.summary.ledger }
          : null,
      ...(item.result.error ? { error: item.result.error } : {}),
      steps: (item.summary?.steps ?? []).map((s) => ({ id: s.id, status: s.status, requestIds: s.requestIds })),
      finalVideo: video,
      ...(item.temporalUiUrl ? { temporalUiUrl: item.temporalUiUrl } : {}),
    };
  });
  const byState: Record<string, number> = {};
  for (const c of cards) byState[c.status] = (byState[c.status] ?? 0) + 1;
  const sum = (pick: (c: ReportCredits) => number) =>
    cards.reduce((total, c) => total + (c.ledger ? pick(c.ledger) : 0), 0);
  return {
    kind: 'batch',
    name: progress.name,
    workflowId,
    status: progress.status,
    ...(progress.paused
      ? {
          paused: {
            code: progress.paused.code,
            reason: progress.paused.reason,
            waiting: progress.paused.waiting.length,
          },
        }
      : {}),
    totals: {
      items: cards.length,
      byState,
      credits: {
        quoted: sum((c) => c.quoted),
        charged: sum((c) => c.charged),
        refunded: sum((c) => c.refunded),
        net: sum((c) => c.net),
      },
      videoSeconds: cards.reduce(
        (total, c) => total + (c.finalVideo && !c.finalVideo.problem ? c.finalVideo.durationSeconds : 0),
        0,
      ),
    },
    items: cards,
    generatedAt: (options.now?.() ?? new Date()).toISOString(),
  };
}

/** A name safe in a file name (pipeline and step ids are user-chosen). */
function safeName(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'x';
}

/** A paid job's result, or undefined for the output of a step that made no media (an approval gate). */
function jobResultOf(output: StepOutput | undefined): JobResult | undefined {
  return output && 'videos' in output ? output : undefined;
}
