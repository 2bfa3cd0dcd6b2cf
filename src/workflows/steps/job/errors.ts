import { ReelflowError } from '../../../contract/errors';

/**
 * The start deadline of a job (`startDeadlineSeconds`) passed while the provider still held it
 * IN_QUEUE: thrown by the wait (./outcome.ts, one status read on a workflow timer) and caught by the
 * job, which cancels it while cancelling is free (./cancel.ts `cancelUnstarted`). Never leaves the job.
 */
export class StartDeadlinePassed extends ReelflowError {
  readonly code = 'start_deadline_passed';
  constructor(readonly seconds: number) {
    super(`the job was still IN_QUEUE ${seconds} s after its submit`);
  }
}
