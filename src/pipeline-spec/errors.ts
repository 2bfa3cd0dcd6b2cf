import { ReelflowError } from '../contract/errors';
import { FAILURE_TYPES } from '../contract/failure-types';
import type { FieldError } from '../contract/validation';

/**
 * Errors of pipeline specs and references. Plain (no zod): workflows import this module, through
 * references.ts, to tell a reference that cannot be resolved from any other error.
 */

/** A spec that does not validate; `errors` carry paths such as `steps.1.input.video_url`. */
export class PipelineSpecError extends ReelflowError {
  readonly code = 'invalid_pipeline_spec';
  /** The ApplicationFailure type a workflow fails with for such a spec. */
  readonly type = FAILURE_TYPES.invalidPipelineSpec;
  constructor(readonly errors: FieldError[]) {
    super(`invalid pipeline spec:\n${errors.map((e) => `${e.path}: ${e.message}`).join('\n')}`);
  }
}

/** A reference that cannot be resolved from the outputs at hand. */
export class ReferenceResolutionError extends ReelflowError {
  readonly code = 'reference_unresolved';
  constructor(
    message: string,
    readonly location: string,
  ) {
    super(message);
  }
}

/** A payload over budget: its size, the largest fields, and what to change (in the message). */
export class PayloadBudgetError extends ReelflowError {
  readonly code = 'payload_too_large';
  constructor(
    message: string,
    readonly label: string,
    readonly bytes: number,
    readonly budget: number,
    readonly largest: readonly { path: string; bytes: number }[],
  ) {
    super(message);
  }
}
