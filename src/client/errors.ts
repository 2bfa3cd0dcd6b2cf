import type { FieldError } from '../contract';

/**
 * Errors of the API client. Each has a stable `type` that activities map onto
 * `ApplicationFailure` types, so workflows branch on strings, never on `instanceof`.
 */
export abstract class ServiceClientError extends Error {
  abstract readonly type: string;
  /** Whether calling again (same request) may succeed. */
  abstract readonly retryable: boolean;
}

/** The service answered with a problem document (or a non-2xx without one). */
export class ServiceProblemError extends ServiceClientError {
  readonly type = 'ServiceProblem';
  constructor(
    readonly status: number,
    /** Machine-readable code from the problem document (`http_<status>` when there was none). */
    readonly code: string,
    message: string,
    readonly fieldErrors: FieldError[] = [],
    readonly retryAfterSeconds: number | undefined = undefined,
    readonly jobStatus: string | undefined = undefined,
  ) {
    super(message);
    this.name = 'ServiceProblemError';
  }
  get retryable(): boolean {
    return this.status === 429 || this.status === 408 || this.status >= 500;
  }
}

/** The request never reached the service (refused, DNS): safe to retry anything, a submit included. */
export class ServiceUnreachableError extends ServiceClientError {
  readonly type = 'ServiceUnreachable';
  readonly retryable = true;
  constructor(message: string, readonly causeCode: string | undefined) {
    super(message);
    this.name = 'ServiceUnreachableError';
  }
}

/** The call did not finish in time; for a submit that is ambiguous, see AmbiguousSubmissionError. */
export class ServiceTimeoutError extends ServiceClientError {
  readonly type = 'ServiceTimeout';
  readonly retryable = true;
  constructor(message: string) {
    super(message);
    this.name = 'ServiceTimeoutError';
  }
}

/**
 * A submit may have been accepted (and billed) but no answer came back: the connection dropped
 * or timed out after the request was sent. Never retried blindly.
 */
export class AmbiguousSubmissionError extends ServiceClientError {
  readonly type = 'AmbiguousSubmission';
  readonly retryable = false;
  constructor(message: string, readonly idempotencyKey: string | undefined) {
    super(message);
    this.name = 'AmbiguousSubmissionError';
  }
}

/** A 2xx answer whose body does not match the contract. */
export class UnexpectedResponseError extends ServiceClientError {
  readonly type = 'UnexpectedResponse';
  readonly retryable = false;
  constructor(message: string, readonly fieldErrors: FieldError[]) {
    super(message);
    this.name = 'UnexpectedResponseError';
  }
}
