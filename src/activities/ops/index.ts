import { MissingPackageError } from '../../config/errors';
import type { OpRequest, OpResult } from '../../pipeline-spec/steps/op-types';
import type { MediaDeps } from '../media';
import { OpUnavailableError, isOpError } from './errors';
import { runOperation, type OpRunOptions } from './runner';

export type { OpRunOptions } from './runner';

/** The local media operations (op steps: concat, trim, mux_audio, frame) as activities. */
export interface OpActivities {
  /**
   * Runs one operation with ffmpeg on this worker and puts its output into the media store. Costs no
   * credits and calls no service. Idempotent: the same inputs make the same bytes, stored once under
   * their SHA-256, so a retry returns the same object. Failures: OpInputInvalid (naming the field),
   * OpFailed (ffmpeg's stderr tail), MediaUnavailable (no media store, no ffmpeg, an input not
   * reachable now: only the last is retried).
   */
  runOp(request: OpRequest): Promise<OpResult>;
}

/** Builds the operations over the worker's media store. */
export function createOpActivities(media: MediaDeps | undefined, options: OpRunOptions = {}): OpActivities {
  return {
    async runOp(request) {
      try {
        if (!media)
          throw new OpUnavailableError(
            `${request.op}: this worker has no media store configured (set REELFLOW_MEDIA_STORE): an operation's output is stored there`,
          );
        return await runOperation(request, media, options);
      } catch (error) {
        if (isOpError(error)) throw error.toFailure();
        if (
          error instanceof MissingPackageError ||
          String((error as { syscall?: unknown }).syscall).startsWith('spawn')
        )
          throw new OpUnavailableError(
            `${request.op}: ffmpeg/ffprobe cannot be run on this worker (set FFMPEG_PATH and FFPROBE_PATH, or install @ffmpeg-installer/ffmpeg and @ffprobe-installer/ffprobe): ${(error as Error).message}`,
          ).toFailure();
        throw error;
      }
    },
  };
}
