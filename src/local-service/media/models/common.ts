import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MediaError } from '../errors';
import { clipSeconds, probe, runFfmpeg, type ProbeResult } from '../../../media/ffmpeg';

/** What a model needs from the runner for one render. */
export interface ModelContext {
  /** Scratch directory of this render (removed afterwards). */
  workDir: string;
  outputDir: string;
  /** File name of the output inside outputDir. */
  fileName: string;
  signal: AbortSignal;
  /** Makes a URI input a local file; `path` is the input field, `name` the scratch file's base name. */
  fetchInput(uri: string, path: string, name: string): Promise<string>;
}

/** Fast H.264 settings: every model favours turnaround over size (processing_speed changes only the price). */
export const H264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '23', '-pix_fmt', 'yuv420p'] as const;
export const AAC = ['-c:a', 'aac', '-b:a', '128k', '-ac', '2', '-ar', '48000'] as const;
export const FASTSTART = ['-movflags', '+faststart'] as const;
/** Frame rate of generated video. */
export const FPS = 24;

/**
 * Probes an input and checks it carries the stream kind the model needs (images count as video).
 * Throws MediaError input_refused with the field path otherwise.
 */
export async function probeInput(
  file: string,
  path: string,
  kind: 'video' | 'audio',
  signal: AbortSignal,
): Promise<ProbeResult> {
  let result: ProbeResult;
  try {
    result = await probe(file, { signal });
  } catch {
    signal.throwIfAborted();
    throw new MediaError('input_refused', 'is not a readable media file', path);
  }
  // A picture stream of 0x0 is what ffprobe reports for a file named .png that is not one.
  const usable = result.streams.some(
    (s) => s.codecType === kind && (kind === 'audio' || ((s.width ?? 0) > 0 && (s.height ?? 0) > 0)),
  );
  if (!usable) {
    throw new MediaError(
      'input_refused',
      kind === 'video' ? 'has no picture (image or video) stream' : 'has no audio stream',
      path,
    );
  }
  return result;
}

/**
 * Runs ffmpeg into a hidden partial file in outputDir and renames it into place on success, so that
 * the served directory never shows a half-written output. Returns the output path.
 */
export async function encodeTo(ctx: ModelContext, args: readonly string[]): Promise<string> {
  const finalPath = join(ctx.outputDir, ctx.fileName);
  const partial = join(ctx.outputDir, `.${ctx.fileName}.partial`);
  try {
    await runFfmpeg(['-v', 'error', ...args, ...FASTSTART, '-f', 'mp4', partial], { signal: ctx.signal });
    await rename(partial, finalPath);
    return finalPath;
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/** A number as ffmpeg reads it in arguments and filter options (no exponent notation). */
export function seconds(value: number): string {
  return value.toFixed(6);
}

/**
 * The probed clip's length in seconds; with `maxSeconds`, a longer clip is refused with
 * input_too_long on `path` (the service refuses such clips at quote and submit).
 */
export function limitedClipSeconds(result: ProbeResult, path: string, maxSeconds?: number): number {
  const length = clipSeconds(result);
  if (maxSeconds !== undefined && length > maxSeconds + 1e-3) {
    throw new MediaError(
      'input_too_long',
      `clip is ${length.toFixed(3)} s long; at most ${maxSeconds} s are accepted`,
      path,
    );
  }
  return length;
}
