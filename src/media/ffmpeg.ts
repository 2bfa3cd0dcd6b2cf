import { spawn } from 'node:child_process';
import { constants as osConstants, setPriority } from 'node:os';
import { access } from 'node:fs/promises';
import { toolPaths } from '../config/tools';
import { requireOptional } from '../config/optional-packages';
import { FfmpegError } from './errors';

// The installer packages are optional peers, required lazily: they throw on platforms they ship no binary
// for, which must not matter when FFMPEG_PATH / FFPROBE_PATH name one, and a library consumer that never
// renders installs neither (a MissingPackageError names the one a render needs).

/** Path of the ffmpeg binary: env FFMPEG_PATH, else the one shipped in @ffmpeg-installer/ffmpeg. */
export function ffmpegPath(): string {
  return toolPaths().ffmpeg ?? requireOptional<{ path: string }>('@ffmpeg-installer/ffmpeg').path;
}

/** Path of the ffprobe binary: env FFPROBE_PATH, else the one shipped in @ffprobe-installer/ffprobe. */
export function ffprobePath(): string {
  return toolPaths().ffprobe ?? requireOptional<{ path: string }>('@ffprobe-installer/ffprobe').path;
}

const STDERR_KEEP = 64 * 1024;

/** Runs a binary with an argument array (never a shell); kills it on abort, keeps stderr's tail. */
function runProcess(
  binary: string,
  args: readonly string[],
  signal?: AbortSignal,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    // Renders run at the lowest CPU priority (nice 19) so they never starve the orchestration
    // (HTTP, webhooks, Temporal) sharing the machine; a failure to renice is harmless.
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, osConstants.priority.PRIORITY_LOW);
      } catch {
        /* not permitted here: the render runs at normal priority */
      }
    }
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    const onAbort = (): void => {
      child.kill('SIGKILL');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (code) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) reject(signal.reason);
      else if (code === 0) resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: err });
      else reject(new FfmpegError(binary.split(/[\\/]/).pop() ?? 'ffmpeg', code, err));
    });
  });
}

/**
 * Runs ffmpeg with the given arguments (after `-hide_banner -nostdin -y`); rejects with
 * FfmpegError on failure and with `signal.reason` after an abort (the process is killed).
 * @returns what ffmpeg printed on stderr (filters such as astats report there).
 */
export async function runFfmpeg(args: readonly string[], options: { signal?: AbortSignal } = {}): Promise<string> {
  const { stderr } = await runProcess(ffmpegPath(), ['-hide_banner', '-nostdin', '-y', ...args], options.signal);
  return stderr;
}

/** One stream as ffprobe reports it. */
export interface ProbeStream {
  index: number;
  codecType: 'video' | 'audio' | 'subtitle' | 'data' | 'attachment' | string;
  codecName: string | null;
  width: number | null;
  height: number | null;
  /** Seconds, when the container states it per stream. */
  duration: number | null;
  pixFmt: string | null;
  sampleAspectRatio: string | null;
  displayAspectRatio: string | null;
  /** Frames per second as reported (`r_frame_rate`), e.g. 24. */
  frameRate: number | null;
  frameCount: number | null;
  sampleRate: number | null;
  channels: number | null;
}

/** What ffprobe says about a media file. `width`/`height` are the first video stream's. */
export interface ProbeResult {
  /** Seconds: the container duration (0 when unknown). */
  duration: number;
  width: number | null;
  height: number | null;
  formatName: string | null;
  streams: ProbeStream[];
}

function num(value: unknown): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : null;
}

function rate(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const [a, b] = value.split('/').map(Number);
  if (a === undefined || !Number.isFinite(a)) return null;
  if (b === undefined) return a;
  return Number.isFinite(b) && b !== 0 ? a / b : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Probes a media file with ffprobe (format and streams). Rejects with FfmpegError if unreadable. */
export async function probe(file: string, options: { signal?: AbortSignal } = {}): Promise<ProbeResult> {
  const { stdout: json } = await runProcess(
    ffprobePath(),
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file],
    options.signal,
  );
  const parsed = JSON.parse(json) as { format?: Record<string, unknown>; streams?: Array<Record<string, unknown>> };
  const streams: ProbeStream[] = (parsed.streams ?? []).map((s) => ({
    index: num(s.index) ?? 0,
    codecType: str(s.codec_type) ?? 'unknown',
    codecName: str(s.codec_name),
    width: num(s.width),
    height: num(s.height),
    duration: num(s.duration),
    pixFmt: str(s.pix_fmt),
    sampleAspectRatio: str(s.sample_aspect_ratio),
    displayAspectRatio: str(s.display_aspect_ratio),
    frameRate: rate(s.r_frame_rate),
    frameCount: num(s.nb_frames),
    sampleRate: num(s.sample_rate),
    channels: num(s.channels),
  }));
  const video = streams.find((s) => s.codecType === 'video');
  return {
    duration: num(parsed.format?.duration) ?? 0,
    width: video?.width ?? null,
    height: video?.height ?? null,
    formatName: str(parsed.format?.format_name),
    streams,
  };
}

/**
 * Length of a clip in seconds: its first video stream's duration when stated, else the container's.
 * This is the length re-voicing keeps and the per-second models bill.
 */
export function clipSeconds(result: ProbeResult): number {
  const video = result.streams.find((s) => s.codecType === 'video');
  return video?.duration && video.duration > 0 ? video.duration : result.duration;
}

/** Font files tried for drawing the prompt; paths without characters that need filter escaping. */
const FONT_CANDIDATES = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/TTF/DejaVuSans.ttf',
  '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf',
  '/Library/Fonts/Arial.ttf',
  '/System/Library/Fonts/Supplemental/Arial.ttf',
];

/** Characters safe inside an ffmpeg filter argument without escaping. */
export const FILTER_SAFE_PATH = /^[A-Za-z0-9_./-]+$/;

let drawtextFont: Promise<string | null> | undefined;

/**
 * The font file to draw text with, or null when this ffmpeg build cannot draw text (no drawtext
 * filter, no usable font). Checked once per process with a one-frame trial render.
 */
export function findDrawtextFont(): Promise<string | null> {
  drawtextFont ??= (async () => {
    const candidates = [toolPaths().fontFile, ...FONT_CANDIDATES].filter(
      (p): p is string => typeof p === 'string' && FILTER_SAFE_PATH.test(p),
    );
    for (const font of candidates) {
      try {
        await access(font);
        await runFfmpeg([
          '-v',
          'error',
          '-f',
          'lavfi',
          '-i',
          'color=c=black:s=64x64:d=0.04',
          '-vf',
          `drawtext=fontfile=${font}:text=ok:fontcolor=white`,
          '-f',
          'null',
          '-',
        ]);
        return font;
      } catch {
        // Missing font or no drawtext filter in this build: try the next, else skip text.
      }
    }
    return null;
  })();
  return drawtextFont;
}
