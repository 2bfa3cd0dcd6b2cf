import type { JobResult } from '../contract';
import type { PipelineSpec } from './spec';

/**
 * What the Temporal UI shows about a pipeline: its static summary and details (set at start, by the
 * CLI or a parent batch), a summary line per activity and timer, and the live "current details"
 * step table. Pure functions of plain data, so workflows and clients share them.
 */

/**
 * What these texts read of a pipeline's and a batch's progress. The workflows' own summaries
 * (src/workflows/pipeline-types.ts, batch-types.ts) have these fields and more; naming only what is
 * read keeps this shared module below the workflows (docs/architecture.md).
 */
export interface StepView {
  id: string;
  status: string;
  requestIds: readonly string[];
  quoted: number;
  charged: number;
  refunded: number;
  /** A paid job's result; a step that makes no media (an approval gate) has an output without videos. */
  output?: Pick<JobResult, 'videos'> | object;
  error?: string;
  /** A graph's step (version 2): what it waits for, the steps it waits on, and a fan-out step's items. */
  waitingFor?: string;
  dependsOn?: readonly string[];
  items?: readonly { status: string }[];
  /** An approval gate: what it shows and, once decided, how. */
  approval?: ApprovalGateView;
}

/** What the texts read of an approval gate's row (src/workflows/approval-types.ts has the whole). */
export interface ApprovalGateView {
  preview?: string | readonly string[];
  decision?: { decision: string; reason?: string; by?: string; timedOut?: true };
}

/** The state of an approval gate in a word or three: `waiting for a person`, `approved by ann`, `rejected (timed out)`. */
export function approvalStateText(gate: ApprovalGateView): string {
  const { decision } = gate;
  if (!decision) return 'waiting for a person';
  const verdict = decision.decision === 'approve' ? 'approved' : 'rejected';
  const who = decision.timedOut ? ' (timed out)' : decision.by ? ` by ${decision.by}` : '';
  return `${verdict}${who}${decision.reason ? `: ${decision.reason}` : ''}`;
}

/** A gate's preview as a list of URLs (none when it shows nothing). */
export function previewUrls(gate: ApprovalGateView): string[] {
  const { preview } = gate;
  return preview === undefined ? [] : typeof preview === 'string' ? [preview] : [...preview];
}

/** A pipeline's progress as the current details read it. */
export interface PipelineView {
  status: string;
  currentStep: string | null;
  budgetCredits: number | null;
  ledger: { quoted: number; charged: number; refunded: number; net: number };
  steps: readonly StepView[];
  error?: string;
}

/** A batch's progress as its status lines read it. */
export interface BatchView {
  name: string;
  status: string;
  runs: number;
  total: number;
  completed: number;
  failed: number;
  cancelled: number;
  skipped: number;
  running: readonly string[];
  credits?: { charged: number; refunded: number; net: number };
  startedAt?: number;
  updatedAt?: number;
  budgetCredits?: number | null;
  stoppedBy?: 'budget' | null;
  /** Set while an account-level refusal pauses the batch (until `reelflow batch resume`). */
  paused?: { code: string; reason: string; waiting: readonly string[] };
}

/** The Temporal UI shows the summary on one line; the server caps user metadata, so stay well below. */
const SUMMARY_MAX = 200;
const DETAILS_MAX = 16 * 1024;

/** Per-step times (epoch ms, workflow time; ISO strings accepted) that make the table's elapsed column. */
export interface StepClock {
  startedAt?: number | string;
  submittedAt?: number | string;
  finishedAt?: number | string;
}

function ms(at: number | string | undefined): number | undefined {
  const value = typeof at === 'number' ? at : at === undefined ? NaN : Date.parse(at);
  return Number.isFinite(value) ? value : undefined;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `…c3f1`: the tail of an id, enough to tell two apart in a list. */
export function shortId(id: string): string {
  return id.length <= 8 ? id : `…${id.slice(-4)}`;
}

/** `launch-en: generate → revoice → upscale · budget 500 credits`. */
export function pipelineSummaryLine(spec: Pick<PipelineSpec, 'name' | 'steps' | 'budgetCredits'>): string {
  const budget = spec.budgetCredits === undefined ? 'no budget' : `budget ${spec.budgetCredits} credits`;
  return clip(`${spec.name}: ${spec.steps.map((s) => s.id).join(' → ')} · ${budget}`, SUMMARY_MAX);
}

/**
 * A data URI as a short description (`inline image/png, 12.3 KiB`): the UI, `reelflow status --json`
 * and the progress query never show inlined media (nor the string `data:`).
 */
export function describeDataUri(value: string): string {
  const comma = value.indexOf(',');
  const header = value.slice(5, comma < 0 ? Math.min(value.length, 60) : comma);
  const type = header.split(';')[0] || 'application/octet-stream';
  const payload = comma < 0 ? 0 : value.length - comma - 1;
  const bytes = header.includes(';base64') ? Math.floor((payload * 3) / 4) : payload;
  return `inline ${type}, ${bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`}`;
}

/** The value with every data URI replaced by its description (strings, arrays and objects, recursively). */
export function withoutInlineMedia<T>(value: T): T;
export function withoutInlineMedia(value: unknown): unknown {
  if (typeof value === 'string') return value.startsWith('data:') ? `<${describeDataUri(value)}>` : value;
  if (Array.isArray(value)) return value.map(withoutInlineMedia);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutInlineMedia(v)]));
  return value;
}

/** A step in a few words: its model (and resubmits), its local operation, or its gate's timeout. */
function stepKindText(s: PipelineSpec['steps'][number]): string {
  if ('model' in s) return `${s.model}${s.retry?.maxResubmits ? ` (up to ${s.retry.maxResubmits} resubmits)` : ''}`;
  if (s.op === 'approval') return `approval gate (${s.timeoutHours} h, then ${s.onTimeout})`;
  return `${s.op} (local)`;
}

/** Markdown details: the steps as a list and the spec as JSON, without inlined media. */
export function pipelineDetails(spec: PipelineSpec): string {
  const lines = [
    `**${spec.name}** · ${spec.steps.length} step${spec.steps.length === 1 ? '' : 's'} · ${spec.budgetCredits === undefined ? 'no budget' : `budget ${spec.budgetCredits} credits`}`,
    '',
    ...spec.steps.map((s, i) => `${i + 1}. \`${s.id}\` — ${stepKindText(s)}`),
    '',
    '```json',
  ];
  const json = JSON.stringify(withoutInlineMedia(spec), null, 2);
  const room = DETAILS_MAX - lines.join('\n').length - 16;
  return [...lines, json.length <= room ? json : `${json.slice(0, room)}\n… (cut)`, '```'].join('\n');
}

/** Start options that make the Temporal UI explain a pipeline: `{ staticSummary, staticDetails }`. */
export function pipelineStartOptions(spec: PipelineSpec): {
  staticSummary: string;
  staticDetails: string;
  priority?: { priorityKey: number };
} {
  return {
    staticSummary: pipelineSummaryLine(spec),
    staticDetails: pipelineDetails(spec),
    // Temporal's task-queue priority, which the pipeline's jobs also queue for the account's slots by.
    ...(spec.priority !== undefined ? { priority: { priorityKey: spec.priority } } : {}),
  };
}

/** `nightly: 12 pipelines · concurrency 4`. */
export function batchSummaryLine(name: string, items: number, concurrency: number, rerun: boolean): string {
  return clip(
    `${name}: ${items} pipeline${items === 1 ? '' : 's'} · concurrency ${concurrency}${rerun ? ' · re-run of the failed items' : ''}`,
    SUMMARY_MAX,
  );
}

/** Items a batch's static details list; the rest are counted ("… and 9,950 more"). */
const DETAILS_ITEMS = 50;

/** Markdown details of a batch: its first items and their steps (`total` when the list is a prefix). */
export function batchDetails(
  name: string,
  items: ReadonlyArray<Pick<PipelineSpec, 'name' | 'steps' | 'budgetCredits'>>,
  total: number = items.length,
): string {
  const shown = items.slice(0, DETAILS_ITEMS);
  const lines = [
    `**${name}** · ${total} pipelines`,
    '',
    ...shown.map((item) => `- ${pipelineSummaryLine(item)}`),
    ...(total > shown.length ? [`- … and ${total - shown.length} more`] : []),
  ];
  return clip(lines.join('\n'), DETAILS_MAX);
}

/** The credits of several partitions of a batch, summed. */
export function sumBatchCredits(parts: readonly Pick<BatchView, 'credits'>[]): {
  charged: number;
  refunded: number;
  net: number;
} {
  return parts.reduce(
    (t, p) => ({
      charged: t.charged + (p.credits?.charged ?? 0),
      refunded: t.refunded + (p.credits?.refunded ?? 0),
      net: t.net + (p.credits?.net ?? 0),
    }),
    { charged: 0, refunded: 0, net: 0 },
  );
}

/** Finished items, items per second since the start and the estimated seconds left (null when unknown). */
export function batchRates(
  progress: BatchView,
  now: number,
): { finished: number; itemsPerSecond: number | null; etaSeconds: number | null } {
  const finished = progress.completed + progress.failed + progress.cancelled + progress.skipped;
  const elapsed = progress.startedAt !== undefined ? (now - progress.startedAt) / 1000 : 0;
  const itemsPerSecond = elapsed > 0 && finished > 0 ? finished / elapsed : null;
  const left = Math.max(0, progress.total - finished);
  const etaSeconds =
    progress.status === 'paused'
      ? null
      : progress.status !== 'running'
        ? 0
        : itemsPerSecond
          ? left / itemsPerSecond
          : null;
  return { finished, itemsPerSecond, etaSeconds };
}

/** Counts by state, items/s, credits and ETA of a batch: `reelflow status` and the UI's current details. */
export function batchStatusLines(progress: BatchView, now: number): string[] {
  const { finished, itemsPerSecond, etaSeconds } = batchRates(progress, now);
  const credits = progress.credits;
  const budget = progress.budgetCredits ? ` of a ${progress.budgetCredits} budget` : '';
  return [
    `${finished}/${progress.total} finished: completed ${progress.completed} · failed ${progress.failed} · cancelled ${progress.cancelled} · skipped ${progress.skipped} · running ${progress.running.length}`,
    `rate ${itemsPerSecond === null ? '—' : `${itemsPerSecond.toFixed(2)} items/s`} · ETA ${etaSeconds === null ? '—' : seconds(etaSeconds * 1000)}`,
    ...(credits
      ? [`credits ${credits.net} net (${credits.charged} charged, ${credits.refunded} refunded)${budget}`]
      : []),
    ...(progress.stoppedBy === 'budget' ? ['stopped starting items: the budget would be passed'] : []),
    ...(progress.paused ? pausedLines(progress.name, progress.paused) : []),
  ];
}

/** Why a paused batch waits, and what ends it. */
function pausedLines(name: string, paused: NonNullable<BatchView['paused']>): string[] {
  return [
    `paused (${paused.code}): ${paused.reason}`,
    `${paused.waiting.length} item(s) wait, nothing failed or paid for it; after a top-up or a new key: reelflow batch resume batch/${name}`,
  ];
}

/** The live "current details" of a paged batch in the Temporal UI (Markdown). */
export function batchCurrentDetails(progress: BatchView): string {
  const lines = [
    `**${progress.name}** · ${progress.status} · run ${progress.runs}`,
    '',
    ...batchStatusLines(progress, progress.updatedAt ?? Date.now()).map((l) => `- ${l}`),
  ];
  return clip(lines.join('\n'), DETAILS_MAX);
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function seconds(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
}

/** Elapsed of a step: from its start (or submit) to its end, or to `now` while it runs. */
export function stepElapsed(step: StepClock, now: number): string {
  const from = ms(step.startedAt) ?? ms(step.submittedAt);
  if (from === undefined) return '—';
  return seconds((ms(step.finishedAt) ?? now) - from);
}

/** A URL as a Markdown link target (parentheses and spaces escaped). */
function linkTarget(url: string): string {
  return url.replace(/[()\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

function outputCell(step: StepView): string {
  if (step.approval)
    return (
      previewUrls(step.approval)
        .map((url, i) => `[preview ${i + 1}](${linkTarget(url)})`)
        .join(' ') || '—'
    );
  // An op step's frame is an image: it is linked like a video.
  const output = step.output as
    { videos?: Pick<JobResult, 'videos'>['videos']; images?: Pick<JobResult, 'videos'>['videos'] } | undefined;
  const videos = [...(output?.videos ?? []), ...(output?.images ?? [])];
  if (videos.length === 0) return '—';
  return videos.map((v) => `[${escapeCell(v.file_name || 'output')}](${linkTarget(v.url)})`).join(' ');
}

function creditsCell(step: StepView): string {
  if (step.charged === 0 && step.quoted === 0) return '—';
  const net = step.charged - step.refunded;
  return step.refunded > 0
    ? `${net} (refunded ${step.refunded})`
    : step.charged > 0
      ? String(net)
      : `quoted ${step.quoted}`;
}

/**
 * A graph's step state (version 2): what it waits for, and a fan-out step's items by state
 * (`running · waits for job · items 2/4 done, 1 failed`); undefined for a version-1 step.
 */
function graphState(step: StepView): string | undefined {
  if (step.dependsOn === undefined) return undefined;
  const parts = [step.status];
  if (step.waitingFor === 'dependencies') parts.push(`waits for ${step.dependsOn.map((id) => `\`${id}\``).join(', ')}`);
  else if (step.waitingFor)
    parts.push(`waits for ${step.waitingFor === 'person' ? 'a person' : `a ${step.waitingFor}`}`);
  if (step.items) {
    const count = (status: string) => step.items?.filter((item) => item.status === status).length ?? 0;
    const failed = count('failed');
    parts.push(`items ${count('completed')}/${step.items.length} done${failed ? `, ${failed} failed` : ''}`);
  }
  return parts.join(' · ');
}

/**
 * The live "current details" of a pipeline: a markdown table of its steps (state, request id,
 * credits, elapsed, output link) and a line with the ledger, budget and error.
 */
export function currentDetailsMarkdown(summary: PipelineView, now: number): string {
  const rows = summary.steps.map((step) => {
    const clock = step as StepView & StepClock & { phase?: string };
    const phase =
      step.approval && (step.status === 'running' || step.approval.decision)
        ? approvalStateText(step.approval)
        : clock.phase;
    const state =
      graphState(step) ??
      (phase && (step.status === 'running' || step.approval) ? `${step.status} (${phase})` : step.status);
    const request = step.requestIds.at(-1);
    return `| ${escapeCell(step.id)} | ${escapeCell(state)} | ${request ? `\`${request}\`` : '—'} | ${creditsCell(step)} | ${stepElapsed(clock, now)} | ${outputCell(step)} |`;
  });
  const { ledger } = summary;
  const budget = summary.budgetCredits === null ? '' : ` of budget ${summary.budgetCredits}`;
  const running = summary.steps
    .filter((s) => s.status === 'running' && s.dependsOn !== undefined)
    .map((s) => `\`${s.id}\``);
  const where =
    running.length > 1
      ? ` · steps ${running.join(', ')}`
      : summary.currentStep
        ? ` · step \`${summary.currentStep}\``
        : '';
  const lines = [
    `**${summary.status}**${where} · credits ${ledger.net} net${budget} (charged ${ledger.charged}, refunded ${ledger.refunded})`,
    '',
    '| Step | State | Request id | Credits | Elapsed | Output |',
    '|---|---|---|---|---|---|',
    ...rows,
  ];
  const errors = summary.steps.filter((s) => s.error).map((s) => `- \`${s.id}\`: ${escapeCell(s.error as string)}`);
  if (summary.error && errors.length === 0) errors.push(`- ${escapeCell(summary.error)}`);
  if (errors.length) lines.push('', '**Errors**', ...errors);
  return clip(lines.join('\n'), DETAILS_MAX);
}

/** Activity summaries a person understands (shown on each activity in the timeline). */
export const ACTIVITY_SUMMARIES = {
  quote: (step: string, model: string) => `quote ${step} · ${model}`,
  submit: (step: string, model: string, idempotencyKey: string, attempt: number) =>
    `submit ${step} · ${model} · key ${shortId(idempotencyKey.replace(/:\d+$/, ''))}${attempt > 1 ? ` · resubmit ${attempt - 1}` : ''}`,
  poll: (step: string, requestId: string) => `poll the status of ${step} (${shortId(requestId)})`,
  result: (step: string, requestId: string) => `fetch the result of ${step} (${shortId(requestId)})`,
  cancel: (step: string, requestId: string) => `cancel ${step} at the service (${shortId(requestId)})`,
} as const;

/** Timer summaries: what the pipeline waits for and when it looks next. */
export const TIMER_SUMMARIES = {
  webhook: (requestId: string, nextPollSeconds: number) =>
    `wait for the webhook of ${shortId(requestId)} (next poll in ${Math.round(nextPollSeconds)} s)`,
  backoff: (step: string, seconds: number) => `back off ${Math.round(seconds)} s before resubmitting ${step}`,
  approval: (step: string, hours: number, onTimeout: string) =>
    `wait for a person to approve or reject ${step} (then ${onTimeout} after ${hours} h)`,
} as const;
