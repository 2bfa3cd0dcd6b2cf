import { Context } from '@temporalio/activity';
import type { CancelResponse, GenerationRequest, JobResult, ModelId, ModelInputs, StatusResponse } from '../contract';
import { ServiceProblemError } from '../client/errors';
import type { CallKind, ServiceClient } from '../client/types';
import { toApplicationFailure } from './errors';

export { FAILURE_TYPES, toApplicationFailure, type ServiceFailureDetails } from './errors';

/** What the activities need: the service client and the webhook subscription (bridge). */
export interface ActivityDeps {
  client: ServiceClient;
  /** From `createSubscribeActivity(client, taskQueue)` in src/bridge/subscribe-activity.ts. */
  subscribe: { subscribeToWebhook(requestId: string, subscriberWorkflowId: string): Promise<void> };
  /** Called once per activity call of each kind; tests and benchmarks count status polls with it. */
  onCall?: (kind: CallKind) => void;
  /** Heartbeat period while a call is in flight (the client may be backing off inside). Default 5 s. */
  heartbeatEveryMs?: number;
}

/** A quote as the workflows use it. */
export interface JobQuote {
  credits: number;
  pricingUnit: 'per-output-second' | 'per-request';
}

/** The activities registered on the reelflow worker. Thin wrappers over the service client. */
export interface ReelflowActivities {
  quoteJob(model: ModelId, input: Record<string, unknown>): Promise<JobQuote>;
  /** Submits with an Idempotency-Key; a retry (after a crash) with the same key returns the same job. */
  submitJob(model: ModelId, input: Record<string, unknown>, idempotencyKey: string): Promise<GenerationRequest>;
  pollJobStatus(requestId: string, statusUrl?: string): Promise<StatusResponse>;
  fetchJobResult(requestId: string, responseUrl?: string): Promise<JobResult>;
  /** Asks the service to cancel; a job already terminal answers with its state instead of an error. */
  cancelJob(requestId: string, cancelUrl?: string): Promise<CancelResponse>;
  subscribeToWebhook(requestId: string, subscriberWorkflowId: string): Promise<void>;
}

/** Builds the activities over `deps`. */
export function createActivities(deps: ActivityDeps): ReelflowActivities {
  const { client } = deps;
  const every = deps.heartbeatEveryMs ?? 5_000;

  /** Runs `call`, heartbeating while it waits and mapping client errors to ApplicationFailure. */
  async function wrap<T>(kind: CallKind | 'subscribe', call: () => Promise<T>): Promise<T> {
    if (kind !== 'subscribe') deps.onCall?.(kind);
    let timer: NodeJS.Timeout | undefined;
    try {
      const context = Context.current();
      // Beat well inside the heartbeat timeout the workflow chose, however short.
      const timeoutMs = context.info.heartbeatTimeoutMs;
      const period = timeoutMs ? Math.min(every, Math.max(100, timeoutMs / 3)) : every;
      context.heartbeat();
      timer = setInterval(() => context.heartbeat(), period);
    } catch {
      // Not inside an activity (direct call in a script): nothing to heartbeat.
    }
    try {
      return await call();
    } catch (error) {
      throw toApplicationFailure(error);
    } finally {
      if (timer) clearInterval(timer);
    }
  }

  return {
    async quoteJob(model, input) {
      const quote = await wrap('quote', () => client.quote(model, input as ModelInputs[typeof model]));
      return { credits: quote.credits, pricingUnit: quote.pricing_unit };
    },
    submitJob(model, input, idempotencyKey) {
      return wrap('submit', () => client.submit(model, input as ModelInputs[typeof model], { idempotencyKey }));
    },
    pollJobStatus(requestId, statusUrl) {
      return wrap('status', () => client.status(requestId, statusUrl ? { statusUrl } : {}));
    },
    fetchJobResult(requestId, responseUrl) {
      return wrap('result', () => client.result(requestId, responseUrl ? { responseUrl } : {}));
    },
    cancelJob(requestId, cancelUrl) {
      return wrap('cancel', async () => {
        try {
          return await client.cancel(requestId, cancelUrl ? { cancelUrl } : {});
        } catch (error) {
          // Too late to cancel is an answer, not a failure: the job is terminal already.
          if (error instanceof ServiceProblemError && error.jobStatus && (error.jobStatus === 'COMPLETED' || error.jobStatus === 'FAILED' || error.jobStatus === 'CANCELLED')) {
            return { request_id: requestId, status: error.jobStatus };
          }
          throw error;
        }
      });
    },
    subscribeToWebhook(requestId, subscriberWorkflowId) {
      return wrap('subscribe', () => deps.subscribe.subscribeToWebhook(requestId, subscriberWorkflowId));
    },
  };
}
