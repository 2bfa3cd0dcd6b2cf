import type { ArchivedOutput, MediaRef } from '../../contract';

/**
 * The words of the local media operations as plain data, shared by the spec (./op.ts), the
 * activities that run them (src/activities/ops/) and the workflow side (src/workflows/steps/op/).
 * No imports but types, so the workflow sandbox reads it.
 */

/** The operations, by the value of a step's `op`. */
export const OP_NAMES = ['concat', 'trim', 'mux_audio', 'frame'] as const;
export type OpName = (typeof OP_NAMES)[number];

/** The input fields of an operation that carry media (a URL, a data URI, a reference, or a local path in a spec file). */
export const OP_MEDIA_FIELDS: readonly string[] = ['video', 'audio', 'videos'];

/** Bounds of an operation's input. */
export const OP_LIMITS = {
  /** Clips one concat joins. */
  maxConcatVideos: 50,
  /** Largest time in seconds a trim or frame names (a day). */
  maxSeconds: 86_400,
} as const;

/** A media input as an operation receives it: a URL or data URI, or a media-store reference (an archived output). */
export type OpMedia = string | MediaRef;

/** Inputs of the operations, references resolved. */
export interface OpInputs {
  /** Joins `videos` in order; clips are conformed to the first one's size and frame rate. */
  concat: { videos: OpMedia[] };
  /** Keeps `start`..`end` seconds of `video`. */
  trim: { video: OpMedia; start: number; end: number };
  /** `video` with `audio` as its sound (`replace`, the default) or mixed into it (`mix`); as long as the video. */
  mux_audio: { video: OpMedia; audio: OpMedia; mode?: 'replace' | 'mix' };
  /** One frame of `video` at `at` seconds, or its last one, as a PNG (default) or JPEG image. */
  frame: { video: OpMedia; at: number | 'last'; format?: 'png' | 'jpeg' };
}

/** One file an operation made, as the step's output lists it. */
export interface OpOutputFile {
  /** Where the service can fetch it: a signed URL of the media store (https in production), or the stored object's location. */
  url: string;
  file_name: string;
  content_type: string;
  width: number;
  height: number;
  /** Videos: their length in seconds. */
  duration_seconds?: number;
}

/**
 * What an operation returns: its video (`videos[0].url`, what `{"$from": "<op step>"}` reads) or
 * its image (`images[0].url`), and the media-store copy of each file, which later steps and
 * `reelflow outputs` read (as they read archived outputs).
 */
export interface OpResult {
  videos: OpOutputFile[];
  images?: OpOutputFile[];
  archived: ArchivedOutput[];
}

/** Input of the `runOp` activity: the operation, its input and the node key `<pipeline>/op/<step>[/<i>]`. */
export interface OpRequest<N extends OpName = OpName> {
  op: N;
  input: OpInputs[N];
  /** The node's key: where the output is recorded as a referrer and named (`<pipeline>/op/<step>`). */
  key: string;
  /** The pipeline whose referrer the stored output gets (media gc keeps it while the pipeline is kept). */
  pipeline?: string;
  /**
   * When the operation was scheduled (epoch ms of workflow time): a signed output URL is signed as of
   * then, so every attempt returns the same URL while it has at least half its lifetime left.
   */
  signedAt?: number;
}

/** The `model` an operation's step output names (`op:concat`): outputs are read like a job's result. */
export const OP_RESULT_MODEL_PREFIX = 'op:';

/**
 * An operation's output as its step records it: shaped like a job's result (`videos[0].url`, no
 * credits, `request_id` the node key) with its images and the media-store copies beside.
 */
export interface OpStepOutput extends Omit<OpResult, 'archived'> {
  request_id: string;
  status: 'COMPLETED';
  model: `${typeof OP_RESULT_MODEL_PREFIX}${OpName}`;
  credits_used: 0;
  /** The stored copies of the files (a later step reads a file through its copy, as it reads archived outputs). */
  archived: ArchivedOutput[];
}

/** True for a step output an operation made (its files are in the media store already). */
export function isOpStepOutput(output: unknown): output is OpStepOutput {
  const model = (output as { model?: unknown } | null)?.model;
  return (
    typeof model === 'string' &&
    model.startsWith(OP_RESULT_MODEL_PREFIX) &&
    Array.isArray((output as OpStepOutput).archived)
  );
}

/** The node key of an operation, `<pipeline>/op/<step>` (`/<i>` per item of a fan-out). */
export function opKeyOf(pipelineName: string, stepId: string, item?: number): string {
  return `${pipelineName}/op/${stepId}${item === undefined ? '' : `/${item}`}`;
}
