import type { ModelId } from './model-metadata';
import type { GenerationRequest, WebhookEvent } from './resources';
import type { UriRules } from './uri';

/**
 * Prepared submits as data (docs/decisions/pipelines.md, "Prepared submits"): what the pipeline
 * writes beside a job's subscription (the chain of steps the bridge may submit once the job
 * completes), and what the bridge tells the pipeline with the completion (the job it submitted).
 * The pipeline (src/workflows), the submit activity and the bridge's submitter (src/routing) share
 * these types; the JSON of a chain is stored in the route store, so fields are only ever added.
 */

/** One step the bridge may submit: its model, its input as the spec has it, and the workflow's key. */
export interface PreparedStep {
  model: ModelId;
  /** Literals, and references (`{ "$from": … }`) to the step before it only. */
  input: Record<string, unknown>;
  /** The Idempotency-Key of the step's first attempt, as the workflow would send it. */
  idempotencyKey: string;
}

/** The steps after a job that can be submitted without the workflow, in order, and the pipeline's address rules. */
export interface PreparedChain {
  steps: PreparedStep[];
  uriRules?: UriRules;
}

/** What the bridge tells the pipeline beside the completion: the next job, already submitted with the workflow's key. */
export interface PreparedSubmission {
  idempotencyKey: string;
  request: GenerationRequest;
  /** Events of the new job that reached the store before its subscription (usually none). */
  earlyEvents: WebhookEvent[];
  /** The Idempotency-Key of the step after it when its subscription carries the rest of the chain. */
  nextKey?: string;
}
