import { ReelflowError, PROBLEM_CODES, type FieldError, type JobState, type ProblemCode } from '../../contract';

/** Extra members of a problem document beyond the RFC 9457 ones. */
export interface ProblemExtras {
  errors?: FieldError[];
  job_status?: JobState;
  /** Sent as the `Retry-After` header (seconds), not in the body. */
  retryAfterSeconds?: number;
  [member: string]: unknown;
}

/**
 * An error the service answers with an `application/problem+json` document. The HTTP status
 * always comes from `PROBLEM_CODES`, so a code never travels with two statuses.
 */
export class ServiceProblem extends ReelflowError {
  readonly status: number;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
  ) {
    super(detail);
    this.status = PROBLEM_CODES[code];
  }

  /** The document sent on the wire. */
  toDocument(instance?: string): Record<string, unknown> {
    const { retryAfterSeconds, ...members } = this.extras;
    void retryAfterSeconds;
    return {
      type: `https://reelflow.dev/problems/${this.code.replace(/_/g, '-')}`,
      title: titleOf(this.code),
      status: this.status,
      detail: this.detail,
      ...(instance ? { instance } : {}),
      code: this.code,
      ...members,
    };
  }
}

function titleOf(code: ProblemCode): string {
  const words = code.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
