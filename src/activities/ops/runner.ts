import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import { FfmpegError } from '../../media/errors';
import { clipSeconds, probe, runFfmpeg, type ProbeResult } from '../../media/ffmpeg';
import { digestOf } from '../../media/reference';
import { putMediaFile, type MediaStore } from '../../media/store';
import type { ArchivedOutput } from '../../contract';
import type { OpName, OpOutputFile, OpRequest, OpResult } from '../../pipeline-spec/steps/op-types';
import type { MediaDeps } from '../media';
import { concat } from './concat';
import { OpFailedError } from './errors';
import { frame } from './frame';
import { localInput } from './inputs';
import { muxAudio } from './mux-audio';
import type { OpRender, Operation } from './render';
import { trim } from './trim';

/**
 * The runner every operation shares: inputs fetched into a temporary folder, ffmpeg run with a
 * deadline (killed on cancel), the output checked with ffprobe, put into the media store (content-
 * addressed, so a retry that makes the same bytes stores nothing new) and described for the step's
 * output. Heartbeats the whole time.
 */

const OPERATIONS: { [N in OpName]: Operation<N> } = { concat, trim, mux_audio: muxAudio, frame };

/** How long one operation may take, downloads included, unless the worker says otherwise. */
export const DEFAULT_OP_TIMEOUT_MS = 20 * 60_000;

/** Slack between an output's length and the length its operation promised. */
const LENGTH_TOLERANCE_SECONDS = 0.25;

/** Settings of the runner. */
export interface OpRunOptions {
  timeoutMs?: number;
  /** Heartbeat period (default 5 s, or a third of the activity's heartbeat timeout when shorter). */
  heartbeatEveryMs?: number;
}

/** Runs one operation and stores its output. Throws the errors of ./errors.ts (and an abort's reason on cancel). */
export async function runOperation(
  request: OpRequest,
  media: MediaDeps,
  options: OpRunOptions = {},
): Promise<OpResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_OP_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const cancelled = activityContext()?.cancellationSignal;
  const signal = cancelled ? AbortSignal.any([cancelled, deadline]) : deadline;
  const stopBeating = heartbeat(options.heartbeatEveryMs ?? 5_000);
  const dir = await mkdtemp(join(tmpdir(), 'reelflow-op-'));
  try {
    const source = { store: media.store, serviceOrigin: media.serviceOrigin, signal, timeoutMs };
    const operation = OPERATIONS[request.op] as Operation<OpName>;
    const render = await operation(request.input, { input: (value, field) => localInput(value, field, dir, source) });
    const output = join(dir, `output.${render.ext}`);
    try {
      await runFfmpeg(['-v', 'error', ...render.args(output)], { signal });
    } catch (error) {
      if (deadline.aborted && !cancelled?.aborted)
        throw new OpFailedError(`${request.op} took longer than ${Math.round(timeoutMs / 1000)} s and was stopped`);
      if (error instanceof FfmpegError) throw new OpFailedError(`${request.op}: ${error.message}`, error.stderr);
      throw error;
    }
    const made = await checkOutput(request.op, output, render);
    return await store(request, media, output, render, made);
  } finally {
    stopBeating();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Probes the output and checks it is what the operation promised. */
async function checkOutput(op: OpName, file: string, render: OpRender): Promise<ProbeResult> {
  let made: ProbeResult;
  try {
    made = await probe(file);
  } catch (error) {
    if (error instanceof FfmpegError) throw new OpFailedError(`${op}: ffprobe cannot read the output`, error.stderr);
    throw error;
  }
  const problems: string[] = [];
  if (!made.width || !made.height) problems.push('it has no picture');
  if (render.kind === 'video') {
    const seconds = clipSeconds(made);
    if (render.expectSeconds !== undefined && Math.abs(seconds - render.expectSeconds) > LENGTH_TOLERANCE_SECONDS)
      problems.push(`it lasts ${seconds.toFixed(3)} s, not ${render.expectSeconds.toFixed(3)} s`);
    const audio = made.streams.some((s) => s.codecType === 'audio');
    if (render.expectAudio !== undefined && audio !== render.expectAudio)
      problems.push(render.expectAudio ? 'it has no audio stream' : 'it has an audio stream');
  }
  if (problems.length > 0) throw new OpFailedError(`${op}: the output is not usable: ${problems.join('; ')}`);
  return made;
}

/** Puts the output into the store and describes it: the URL the service fetches and the store's copy. */
async function store(
  request: OpRequest,
  media: MediaDeps,
  file: string,
  render: OpRender,
  made: ProbeResult,
): Promise<OpResult> {
  const ref = await putMediaFile(media.store, file, render.contentType, request.pipeline);
  const sha = digestOf(ref.$media) as string;
  const url =
    (await media.store.signedUrl(sha, media.urlLifetimeSeconds, signingDate(request, media))) ??
    objectLocation(media.store, sha);
  const fileName = `${nodeName(request.key)}-${sha.slice(0, 12)}.${render.ext}`;
  const described: OpOutputFile = {
    url,
    file_name: fileName,
    content_type: render.contentType,
    width: made.width ?? 0,
    height: made.height ?? 0,
    ...(render.kind === 'video' ? { duration_seconds: Math.round(clipSeconds(made) * 1000) / 1000 } : {}),
  };
  const archived: ArchivedOutput = { ...ref, url, file_name: fileName };
  return render.kind === 'video'
    ? { videos: [described], archived: [archived] }
    : { videos: [], images: [described], archived: [archived] };
}

/**
 * The date a signed URL is signed as of: when the operation was scheduled, so a retry returns the same
 * URL, unless less than half its lifetime would be left (then now, a URL the service can still fetch).
 */
function signingDate(request: OpRequest, media: MediaDeps): Date | undefined {
  if (request.signedAt === undefined) return undefined;
  const age = Date.now() - request.signedAt;
  return age >= 0 && age < (media.urlLifetimeSeconds * 1000) / 2 ? new Date(request.signedAt) : undefined;
}

/**
 * Where a store that cannot sign URLs (the filesystem) keeps the object: not fetchable by a remote
 * service, so a later step receives the stored copy at its call (a data URI), as with archived outputs.
 */
function objectLocation(store: MediaStore, sha: string): string {
  return `${store.location.replace(/\/+$/, '')}/objects/${sha.slice(0, 2)}/${sha}`;
}

/** `<step>` or `<step>-<i>` of a node key `<pipeline>/op/<step>[/<i>]` (the key itself, made safe, otherwise). */
export function nodeName(key: string): string {
  const at = key.lastIndexOf('/op/');
  const name = at >= 0 ? key.slice(at + 4) : key;
  return name.replace(/\//g, '-').replace(/[^A-Za-z0-9._-]/g, '_') || 'op';
}

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Heartbeats while the operation runs (inside an activity; nothing outside one); returns the stop. */
function heartbeat(everyMs: number): () => void {
  const context = activityContext();
  if (!context) return () => undefined;
  const timeoutMs = context.info.heartbeatTimeoutMs;
  const period = timeoutMs ? Math.min(everyMs, Math.max(100, timeoutMs / 3)) : everyMs;
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), period);
  return () => clearInterval(timer);
}
