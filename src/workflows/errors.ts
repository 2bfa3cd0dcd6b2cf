import { ReelflowError } from '../contract/errors';

/** An operator update refused by its validator; the update is rejected with this message. */
export class OperatorRefusal extends ReelflowError {
  readonly code = 'operator_update_refused';
}
