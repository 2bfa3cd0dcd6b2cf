import { ApplicationFailure } from '@temporalio/workflow';
import { ReelflowError } from '../contract/errors';
import type { FailureType } from '../contract/failure-types';

/** An operator update refused by its validator; the update is rejected with this message. */
export class OperatorRefusal extends ReelflowError {
  readonly code = 'operator_update_refused';
}

/** A failure the workflows throw: non-retryable, its `type` from the failure table. */
export function workflowFailure(type: FailureType, message: string, ...details: unknown[]): ApplicationFailure {
  // `type: type`, not the shorthand: test/repo/errors.test.ts checks the property's value against the table.
  return ApplicationFailure.create({ type: type, nonRetryable: true, message, details });
}
