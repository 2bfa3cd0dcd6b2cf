import type { OpInputs, OpMedia, OpName } from '../../pipeline-spec/steps/op-types';
import type { LocalInput } from './inputs';

/**
 * What one operation asks of the shared runner (./runner.ts): the ffmpeg arguments that make its
 * output file, and what that output must be (checked with ffprobe before it is stored).
 */
export interface OpRender {
  kind: 'video' | 'image';
  /** File extension and media type of the output. */
  ext: 'mp4' | 'png' | 'jpg';
  contentType: 'video/mp4' | 'image/png' | 'image/jpeg';
  /** ffmpeg's arguments (after `-v error`) that write `output`. */
  args(output: string): string[];
  /** Videos: the length the output must have, seconds (±0.25 s), and whether it has sound. */
  expectSeconds?: number;
  expectAudio?: boolean;
}

/** What an operation is given: its inputs fetched and probed on demand. */
export interface OpContext {
  /** Fetches and probes the input `media` found at `field` (`videos.1`). */
  input(media: OpMedia, field: string): Promise<LocalInput>;
}

/** One operation: its input (references resolved) to the render that makes its output. */
export type Operation<N extends OpName> = (input: OpInputs[N], context: OpContext) => Promise<OpRender>;

/** Encoder settings of every video an operation writes: H.264 + AAC in MP4, bit-exact so a retry writes the same bytes. */
export const VIDEO_OUTPUT = [
  ...['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p'],
  ...['-c:a', 'aac', '-b:a', '128k', '-ar', '48000', '-ac', '2'],
  ...['-movflags', '+faststart', '-map_metadata', '-1'],
  ...['-fflags', '+bitexact', '-flags:v', '+bitexact', '-flags:a', '+bitexact'],
] as const;

/** One audio stream in the format every operation mixes and joins in. */
export const AUDIO_FORMAT = 'aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=stereo';

/** Seconds as ffmpeg reads them (no exponent, millisecond precision). */
export function secondsArg(seconds: number): string {
  return (Math.round(seconds * 1000) / 1000).toFixed(3);
}
