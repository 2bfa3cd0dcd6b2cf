import { workflowInfo } from '@temporalio/workflow';
import type { OpInputs, OpMedia, OpName, OpStepOutput } from '../pipeline-spec/steps/op-types';
import { runOp } from './steps/op/run-op';

/**
 * The local media operations as step functions of a team's own workflows (reelflow/workflows):
 * each runs one `runOp` activity on the worker (ffmpeg; the output put into the media store), costs
 * no credits and is idempotent on retry. Pipelines run the same operations as op steps.
 */

/** What an operation step function resolves with: its file (`videos[0]`, or `images[0]` for a frame) and the store's copy. */
export type OpStepResult = OpStepOutput;

/** Options of the operation step functions. */
export interface OpStepOptions {
  /** The node key that names the output file (default `<workflow id>/op/<n>-<operation>`, one per call). */
  key?: string;
  /** The name recorded as the stored output's referrer, kept by `reelflow media gc` while it runs (default the workflow id). */
  referrer?: string;
}

/** Input of `trimVideo`. */
export type TrimVideoInput = OpInputs['trim'];
/** Input of `muxAudio`. */
export type MuxAudioInput = OpInputs['mux_audio'];
/** Input of `takeFrame`. */
export type TakeFrameInput = OpInputs['frame'];
export type { OpMedia };

let opsStarted = 0;

function run<N extends OpName>(op: N, input: OpInputs[N], options: OpStepOptions = {}): Promise<OpStepResult> {
  opsStarted += 1;
  const { workflowId } = workflowInfo();
  return runOp(op, input, {
    key: options.key ?? `${workflowId}/op/${opsStarted}-${op}`,
    pipeline: options.referrer ?? workflowId,
  });
}

/**
 * Joins videos in order into one (clips of another size or frame rate are conformed to the first;
 * the result has sound when any clip has). Each video is a URL (a service output, an earlier
 * operation's `videos[0].url`), a data URI or a media reference.
 *
 * @example
 * const cut = await concatVideos(scenes.map((scene) => scene.videos[0]!.url));
 */
export function concatVideos(videos: OpMedia[], options?: OpStepOptions): Promise<OpStepResult> {
  return run('concat', { videos }, options);
}

/** Keeps `start`..`end` seconds of a video (`end` at most its length). */
export function trimVideo(input: TrimVideoInput, options?: OpStepOptions): Promise<OpStepResult> {
  return run('trim', input, options);
}

/** Gives a video a new sound: `replace` (default) or `mix` it into its own; the result is as long as the video. */
export function muxAudio(input: MuxAudioInput, options?: OpStepOptions): Promise<OpStepResult> {
  return run('mux_audio', input, options);
}

/**
 * One frame of a video as an image (`images[0].url`): at `at` seconds or its `"last"` frame, PNG by
 * default (`format: "jpeg"` for JPEG), e.g. as the next scene's reference image.
 */
export function takeFrame(input: TakeFrameInput, options?: OpStepOptions): Promise<OpStepResult> {
  return run('frame', input, options);
}
