import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { DECIDED_LIMITS, MODEL_DEFINITIONS, modelDefinition, type ModelId, type ModelInput } from '../../contract';
import { MediaError } from './errors';
import { FfmpegError } from '../../media/errors';
import { probe } from '../../media/ffmpeg';
import { materialiseInput, type InputSourceOptions } from './inputs';
import { limitedClipSeconds, probeInput, type ModelContext } from './models/common';
import { rendererOf } from './models';
import type { LookupFn } from '../../net/url-rules';

export { MediaError } from './errors';

/** One output file of a render, inside the request's outputDir. */
export interface RenderedFile {
  path: string;
  fileName: string;
  contentType: string;
}

/** One render: the validated input of a model, written into `outputDir`. */
export interface RenderRequest {
  model: ModelId;
  input: ModelInput;
  requestId: string;
  outputDir: string;
  /**
   * Directory holding inputs already fetched for this job (by `billedSeconds` with `keepIn`),
   * named after their field (`video_url.mp4`): the render uses those bytes, not a second fetch.
   */
  prefetchedDir?: string;
  /** Aborting kills ffmpeg and any download; render then rejects with `signal.reason`. */
  signal: AbortSignal;
}

/** Renders every model (its renderer: ./models) and measures what the per-second models bill. */
export interface ModelRunner {
  /** Renders; rejects with MediaError (or the abort reason). `outputSeconds` is the output's probed duration. */
  render(req: RenderRequest): Promise<{ files: RenderedFile[]; outputSeconds: number }>;
  /**
   * Seconds billed: the probed length of the input clip for the per-second models (a clip over the
   * model's limit is refused), the requested duration for the long-form model. Throws MediaError.
   * With `keepIn`, the fetched clip stays in that directory for the render (see `prefetchedDir`).
   */
  billedSeconds(model: ModelId, input: ModelInput, keepIn?: string): Promise<number>;
}

/** Options of the ffmpeg runner. */
export interface FfmpegModelRunnerOptions {
  /** The `--allow-private-webhooks` switch: input URLs may then be http and private (local use). */
  allowPrivate: boolean;
  /** The service's public origin; `${ownOrigin}/files/<request_id>/<file_name>` is read from disk. */
  ownOrigin: string;
  /** Directory holding `<request_id>/<file_name>` outputs. */
  ownFilesDir: string;
  /** Largest input file or decoded data URI; default 512 MiB. */
  maxInputBytes?: number;
  /** Deadline of one input download, redirects included; default 120 s. */
  fetchTimeoutMs?: number;
  /** DNS resolution of input hosts (tests resolve names without the network); default node:dns. */
  lookup?: LookupFn;
  /** Input access log: one entry per input URL fetched. */
  onInputFetch?: InputSourceOptions['onFetch'];
}

/** The file fetched earlier for input field `path` (`<path>` or `<path>.<ext>` in `dir`), if any. */
async function prefetched(dir: string | undefined, path: string): Promise<string | null> {
  if (!dir) return null;
  const names = await readdir(dir).catch(() => [] as string[]);
  const name = names.find((n) => n === path || (n.startsWith(`${path}.`) && !n.includes('.tmp')));
  return name ? join(dir, name) : null;
}

export const DEFAULT_MAX_INPUT_BYTES = DECIDED_LIMITS.inputFileMaxBytes;
export const DEFAULT_FETCH_TIMEOUT_MS = 120_000;

/** File name of a model's output: `<kind>-<request id>.mp4`, restricted to URL-safe characters. */
export function outputFileName(model: ModelId, requestId: string): string {
  const id = requestId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100) || 'output';
  return `${rendererOf(model).stem}-${id}.mp4`;
}

function toMediaError(error: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted) return signal.reason;
  if (error instanceof MediaError) return error;
  if (error instanceof FfmpegError) return new MediaError('render_failed', error.message);
  return new MediaError('render_failed', (error as Error)?.message ?? String(error));
}

/** A model runner backed by ffmpeg: real, playable outputs (see docs/decisions/media.md). */
export function createFfmpegModelRunner(options: FfmpegModelRunnerOptions): ModelRunner {
  const sources: InputSourceOptions = {
    allowPrivate: options.allowPrivate,
    ownOrigin: options.ownOrigin,
    ownFilesDir: options.ownFilesDir,
    maxInputBytes: options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
    fetchTimeoutMs: options.fetchTimeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS,
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(options.onInputFetch ? { onFetch: options.onInputFetch } : {}),
  };

  async function withWorkDir<T>(fn: (workDir: string) => Promise<T>): Promise<T> {
    const workDir = await mkdtemp(join(tmpdir(), 'reelflow-media-'));
    try {
      return await fn(workDir);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  async function render(req: RenderRequest): Promise<{ files: RenderedFile[]; outputSeconds: number }> {
    req.signal.throwIfAborted();
    try {
      return await withWorkDir(async (workDir) => {
        await mkdir(req.outputDir, { recursive: true });
        const ctx: ModelContext = {
          workDir,
          outputDir: req.outputDir,
          fileName: outputFileName(req.model, req.requestId),
          signal: req.signal,
          fetchInput: async (uri, path, name) =>
            (await prefetched(req.prefetchedDir, path)) ??
            materialiseInput(uri, path, workDir, name, sources, req.signal),
        };
        const file = await rendererOf(req.model).render(req.input, ctx);
        const probed = await probe(file, { signal: req.signal });
        return {
          files: [{ path: file, fileName: basename(file), contentType: 'video/mp4' }],
          outputSeconds: probed.duration,
        };
      });
    } catch (error) {
      throw toMediaError(error, req.signal);
    }
  }

  async function billedSeconds(model: ModelId, input: ModelInput, keepIn?: string): Promise<number> {
    // `model` may come from outside despite its type: an unknown one is a media error, not a TypeError.
    if (!Object.hasOwn(MODEL_DEFINITIONS, model))
      throw new MediaError('render_failed', `unknown model ${String(model)}`);
    const definition = modelDefinition(model);
    const known = definition.outputSeconds(input);
    if (known !== null) return known;
    const rule = definition.price;
    if (rule.kind !== 'per-second') throw new MediaError('render_failed', `no billed clip for ${model}`);
    const signal = new AbortController().signal;
    const measure = async (dir: string): Promise<number> => {
      const field = rule.clipField;
      const uri = (input as Record<string, unknown>)[field] as string;
      const file = await materialiseInput(uri, field, dir, field, sources, signal);
      const probed = await probeInput(file, field, 'video', signal);
      return limitedClipSeconds(probed, field, rule.maxClipSeconds);
    };
    try {
      if (keepIn === undefined) return await withWorkDir(measure);
      await mkdir(keepIn, { recursive: true });
      return await measure(keepIn);
    } catch (error) {
      throw toMediaError(error);
    }
  }

  return { render, billedSeconds };
}
