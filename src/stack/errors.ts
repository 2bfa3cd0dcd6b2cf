import { ReelflowError } from '../contract';

/** The local stack could not set itself up against its own service. */
export class StackSetupError extends ReelflowError {
  readonly code = 'stack_setup_failed';
}
