import { ReelflowError, FAILURE_TYPES } from '../contract';

/** A failed ffmpeg / ffprobe run; `stderr` is the tail of what the tool printed. */
export class FfmpegError extends ReelflowError {
  readonly code = 'ffmpeg_failed';
  readonly exitCode: number | null;
  readonly stderr: string;

  constructor(tool: string, exitCode: number | null, stderr: string) {
    const lastLine = stderr.trim().split('\n').slice(-3).join(' | ');
    super(`${tool} exited with ${exitCode ?? 'a signal'}${lastLine ? `: ${lastLine}` : ''}`);
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** A media failure an activity turns into an ApplicationFailure; `retryable` when trying again may help. */
abstract class MediaFailure extends ReelflowError {
  /** The ApplicationFailure type the media activities throw for it. */
  abstract readonly type: string;
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** An output that could not be archived; `retryable` when trying again may help (network, 5xx). */
export class ArchiveError extends MediaFailure {
  readonly code = 'archive_failed';
  readonly type = FAILURE_TYPES.archiveFailed;
}

/**
 * Why a reference cannot be resolved; `field` is the input path (`image_urls.3`); `permanent` when
 * trying again cannot help (missing object, wrong size, too large to inline).
 */
export class MediaResolutionError extends MediaFailure {
  readonly code = 'media_unavailable';
  readonly type = FAILURE_TYPES.mediaUnavailable;
  constructor(
    message: string,
    readonly field: string,
    readonly permanent: boolean,
  ) {
    super(message, !permanent);
  }
}
