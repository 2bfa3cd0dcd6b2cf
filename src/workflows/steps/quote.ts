import { CancellationScope } from '@temporalio/workflow';
import type { ModelId } from '../../contract';
import type { StepAttempt } from '../pipeline-types';
import { ACTIVITY_SUMMARIES } from '../ui-text';
import { apiWith } from './proxies';

/**
 * A step's quote, asked once. Never cancelled half-way: the ledger needs it even when the step is
 * cancelled. With a budget it runs before the submit; without one, beside the running job.
 */
export class StepQuote {
  credits?: number;
  /** Why the quote failed when it ran beside the job. */
  error?: string;
  private asked?: Promise<number>;

  constructor(
    private readonly model: ModelId,
    private readonly input: Record<string, unknown>,
    /** The step's id, for the activity's summary in the Temporal UI. */
    private readonly stepId = '',
  ) {}

  /** The quoted credits (one activity call for the whole step). */
  ask(): Promise<number> {
    return (this.asked ??= CancellationScope.nonCancellable(() =>
      apiWith(ACTIVITY_SUMMARIES.quote(this.stepId, this.model)).quoteJob(this.model, this.input),
    ).then((quote) => {
      this.credits = quote.credits;
      return quote.credits;
    }));
  }

  /** Charges `attempt` the quote (the service charges the quoted price on submit); a failed quote leaves the charge to the result. */
  async chargeOf(attempt: StepAttempt): Promise<void> {
    try {
      attempt.charged = await this.ask();
    } catch (error) {
      this.error =
        error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    }
  }
}
