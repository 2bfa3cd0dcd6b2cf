import { ApplicationFailure } from '@temporalio/activity';
import { FAILURE_TYPES, ReelflowError, type FailureType } from '../../contract';

/**
 * Errors of the local media operations, each mapped onto the ApplicationFailure type workflows
 * branch on (src/contract/failure-types.ts). `retryable` says whether another attempt may help.
 */
abstract class OpError extends ReelflowError {
  /** The ApplicationFailure type it becomes. */
  abstract readonly type: FailureType;
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }

  /** The failure an activity throws for it. */
  toFailure(): ApplicationFailure {
    return ApplicationFailure.create({
      type: this.type,
      message: this.message,
      nonRetryable: !this.retryable,
      details: [this.details()],
    });
  }

  protected details(): Record<string, unknown> {
    return { code: this.code };
  }
}

/** An input the operation cannot use (not a video, no audio, a time past its end): `field` is its path in the input. */
export class OpInputInvalidError extends OpError {
  readonly code = 'op_input_invalid';
  readonly type = FAILURE_TYPES.opInputInvalid;
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(`${field}: ${message}`, false);
  }
  protected override details() {
    return { code: this.code, field: this.field };
  }
}

/** An input that could not be fetched now (network, 5xx, a store that did not answer): tried again. */
export class OpInputUnavailableError extends OpError {
  readonly code = 'op_input_unavailable';
  readonly type = FAILURE_TYPES.mediaUnavailable;
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(`${field}: ${message}`, true);
  }
}

/** ffmpeg failed or made something that is not the expected output; `stderr` is the tail of what it printed. */
export class OpFailedError extends OpError {
  readonly code = 'op_failed';
  readonly type = FAILURE_TYPES.opFailed;
  constructor(
    message: string,
    readonly stderr = '',
    retryable = false,
  ) {
    super(message, retryable);
  }
  protected override details() {
    return { code: this.code, stderrTail: this.stderr.slice(-2_000) };
  }
}

/** The worker cannot run operations at all: no media store, or no ffmpeg. Names what to set. */
export class OpUnavailableError extends OpError {
  readonly code = 'op_unavailable';
  readonly type = FAILURE_TYPES.mediaUnavailable;
  constructor(message: string) {
    super(message, false);
  }
}

/** True for the errors above (an activity maps them with `toFailure`). */
export function isOpError(error: unknown): error is OpError {
  return error instanceof OpError;
}
