import { ReelflowError, FAILURE_TYPES, type FailureType, type FieldError } from '../contract';

/**
 * Errors of the API client. Each has a stable `code` and the `type` (from the one table,
 * src/contract/failure-types.ts) that activities map it onto as an `ApplicationFailure`, so
 * workflows branch on strings, never on `instanceof`.
 */
export abstract class ServiceClientError extends ReelflowError {
  /** The ApplicationFailure type an activity throws for this error. */
  abstract readonly type: FailureType;
  /** Whether calling again (same request) may succeed. */
  abstract readonly retryable: boolean;
}

/** The service answered with a problem document (or a non-2xx without one). */
export class ServiceProblemError extends ServiceClientError {
  readonly type = FAILURE_TYPES.serviceProblem;
  constructor(
    readonly status: number,
    /**
     * Machine-readable code from the problem document (`http_<status>` when there was none): the
     * one error whose code is not a literal, since the service's catalogue decides it.
     */
    readonly code: string,
    message: string,
    readonly fieldErrors: FieldError[] = [],
    readonly retryAfterSeconds: number | undefined = undefined,
    readonly jobStatus: string | undefined = undefined,
  ) {
    super(message);
  }
  get retryable(): boolean {
    return this.status === 429 || this.status === 408 || this.status >= 500;
  }
}

/**
 * The terminal state a refused cancel reported (`cancel_too_late`, 409 with `job_status`): the job
 * ended before the cancel reached it, which is an answer, not a failure. Undefined for any other error.
 */
export function tooLateToCancel(error: unknown): 'COMPLETED' | 'FAILED' | 'CANCELLED' | undefined {
  if (!(error instanceof ServiceProblemError)) return undefined;
  const status = error.jobStatus;
  return status === 'COMPLETED' || status === 'FAILED' || status === 'CANCELLED' ? status : undefined;
}

/**
 * True when the service answered that it has no such route (404 or 405): what a service without one
 * of the local service's extensions (the account ledger, the lookup by Idempotency-Key) answers.
 */
export function isMissingRoute(error: unknown): boolean {
  return error instanceof ServiceProblemError && (error.status === 404 || error.status === 405);
}

/** The request never reached the service (refused, DNS): safe to retry anything, a submit included. */
export class ServiceUnreachableError extends ServiceClientError {
  readonly code = 'service_unreachable';
  readonly type = FAILURE_TYPES.serviceUnreachable;
  readonly retryable = true;
  constructor(
    message: string,
    readonly causeCode: string | undefined,
  ) {
    super(message);
  }
}

/** The call did not finish in time; for a submit that is ambiguous, see AmbiguousSubmissionError. */
export class ServiceTimeoutError extends ServiceClientError {
  readonly code = 'service_timeout';
  readonly type = FAILURE_TYPES.serviceTimeout;
  readonly retryable = true;
}

/**
 * A submit may have been accepted (and billed) but no answer came back: the connection dropped or
 * timed out after the request was sent, a 5xx did not say the job was refused, or an earlier attempt
 * died with its worker. Under `REELFLOW_SERVICE_IDEMPOTENCY=honoured` the client has already
 * retried it with the same key as far as its rule allows; `retryable` then says a later attempt with
 * the same key is still safe. Under `unknown` it is never retried: an operator decides.
 */
export class AmbiguousSubmissionError extends ServiceClientError {
  readonly code = 'ambiguous_submission';
  readonly type = FAILURE_TYPES.ambiguousSubmission;
  constructor(
    message: string,
    readonly idempotencyKey: string | undefined,
    /** True only where the service honours the key (a repeat returns the same job). */
    readonly retryable: boolean = false,
    /** Submit attempts made by this call. */
    readonly attempts: number = 1,
  ) {
    super(message);
  }
}

/** A 2xx answer whose body does not match the contract. */
export class UnexpectedResponseError extends ServiceClientError {
  readonly code: 'unexpected_response' | 'submit_answer_invalid' = 'unexpected_response';
  readonly type: FailureType = FAILURE_TYPES.unexpectedResponse;
  readonly retryable = false;
  constructor(
    message: string,
    readonly fieldErrors: FieldError[],
  ) {
    super(message);
  }
}

/**
 * A submit answered 2xx with a body that breaks the contract: the job was accepted and is billed,
 * so whatever can be read of it (request id, cancel URL) is kept for cancelling or recording it.
 */
export class SubmitAnswerInvalidError extends UnexpectedResponseError {
  override readonly code = 'submit_answer_invalid';
  override readonly type = FAILURE_TYPES.submitAnswerInvalid;
  constructor(
    message: string,
    fieldErrors: FieldError[],
    readonly idempotencyKey: string | undefined,
    /** `request_id` of the answer when it is a non-empty string. */
    readonly requestId: string | undefined,
    /** `cancel_url` of the answer when it is a string. */
    readonly cancelUrl: string | undefined,
    /** The start of the body as received (at most 2,000 characters), for the record. */
    readonly bodyExcerpt: string,
  ) {
    super(message, fieldErrors);
  }
}
