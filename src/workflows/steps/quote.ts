import { CancellationScope } from '@temporalio/workflow';
import type { ModelId } from '../../contract';
import type { StepAttempt } from '../pipeline-types';
import { ACTIVITY_SUMMARIES } from '../../spec/ui-text';
import { apiWith } from './proxies';

/**
 * A step's price, asked only where it buys something: before the submit when a budget must be
 * checked, or for the ledger when the result carries no charge (a FAILED or CANCELLED job, a webhook
 * result with `credits_used: null`). Asked once per step (every attempt has the same input, so the
 * same price); the long-form model is priced from the contract's table by the activity, without a
 * service call. Never cancelled half-way: the ledger needs it even when the step is cancelled.
 */
export class StepQuote {
  credits?: number;
  /** Why the quote failed (the charge is then what the result says, or unknown). */
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

  /** Charges `attempt` the quote (the service charges the quoted price on submit); a failed quote leaves the charge as it was. */
  async chargeOf(attempt: StepAttempt): Promise<void> {
    try {
      attempt.charged = await this.ask();
    } catch (error) {
      this.error =
        error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    }
  }
}

/**
 * Ledger quotes still running for steps that completed with a result that carried no charge: they run
 * beside the later steps, off every hand-off, and the pipeline awaits them only before it closes.
 */
export class PendingCharges {
  private readonly pending: Promise<void>[] = [];

  add(charging: Promise<void>, then: () => void): void {
    this.pending.push(charging.then(then));
  }

  /** Resolves once every ledger quote answered (or failed: its step's charge stays unknown). */
  async settled(): Promise<void> {
    while (this.pending.length) await Promise.all(this.pending.splice(0));
  }
}
