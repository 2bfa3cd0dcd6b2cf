import { ApplicationFailure } from '@temporalio/activity';
import {
  ServiceClientError,
  ServiceProblemError,
  AmbiguousSubmissionError,
  SubmitAnswerInvalidError,
} from '../client/errors';
import { ReelflowError, serviceProblemType } from '../contract';

/**
 * Errors of the activities, and the mapping of the API client's errors onto ApplicationFailure
 * types (every type is in src/contract/failure-types.ts). A problem document keeps its stable code
 * in the type (`ServiceProblem:insufficient_credits`), so a workflow can branch on either part.
 */

/** Why the head of a URL could not be read. `definite`: the service would fail the same way; else it may pass later. */
export class InputHeadError extends ReelflowError {
  readonly code = 'input_head_unreadable';
  constructor(
    message: string,
    readonly definite: boolean,
  ) {
    super(message);
  }
}

/** Structured details attached to every mapped failure (first element of `details`). */
export interface ServiceFailureDetails {
  type: string;
  code?: string;
  status?: number;
  fieldErrors?: { path: string; message: string }[];
  jobStatus?: string;
  idempotencyKey?: string;
  /** SubmitAnswerInvalid: what could be read of the accepted job, and the body as received. */
  requestId?: string;
  cancelUrl?: string;
  bodyExcerpt?: string;
  /** AmbiguousSubmission: submit attempts made by the failed activity attempt. */
  attempts?: number;
}

/**
 * Maps a client error to an ApplicationFailure. Non-retryable: validation (422), auth (401/403),
 * insufficient credits (402), any other 4xx but 408/429, an ambiguous submission and a body that
 * breaks the contract. Retryable: 408/429/5xx, unreachable, timeout (honouring Retry-After).
 */
export function toApplicationFailure(error: unknown): unknown {
  if (!(error instanceof ServiceClientError)) return error;
  if (error instanceof ServiceProblemError) {
    const details: ServiceFailureDetails = {
      type: error.type,
      code: error.code,
      status: error.status,
      ...(error.fieldErrors.length ? { fieldErrors: error.fieldErrors } : {}),
      ...(error.jobStatus ? { jobStatus: error.jobStatus } : {}),
    };
    return ApplicationFailure.create({
      type: serviceProblemType(error.code),
      message:
        error.message +
        (error.fieldErrors.length ? ` [${error.fieldErrors.map((f) => `${f.path}: ${f.message}`).join('; ')}]` : ''),
      nonRetryable: !error.retryable,
      details: [details],
      ...(error.retryable && error.retryAfterSeconds !== undefined
        ? { nextRetryDelay: `${error.retryAfterSeconds}s` }
        : {}),
    });
  }
  const details: ServiceFailureDetails = {
    type: error.type,
    ...(error instanceof AmbiguousSubmissionError
      ? { attempts: error.attempts, ...(error.idempotencyKey ? { idempotencyKey: error.idempotencyKey } : {}) }
      : {}),
    ...(error instanceof SubmitAnswerInvalidError
      ? {
          fieldErrors: error.fieldErrors,
          bodyExcerpt: error.bodyExcerpt,
          ...(error.idempotencyKey ? { idempotencyKey: error.idempotencyKey } : {}),
          ...(error.requestId ? { requestId: error.requestId } : {}),
          ...(error.cancelUrl ? { cancelUrl: error.cancelUrl } : {}),
        }
      : {}),
  };
  return ApplicationFailure.create({
    type: error.type,
    message: error.message,
    nonRetryable: !error.retryable,
    details: [details],
  });
}
