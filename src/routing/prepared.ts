import {
  type GenerationRequest,
  type JobResult,
  type ModelId,
  type ModelInputs,
  type UriRules,
  type WebhookEvent,
  type PreparedChain,
  type PreparedStep,
  type PreparedSubmission,
  uriProblem,
  SIGNAL_NAMES,
} from '../contract';
import type { ServiceClient } from '../client/types';
import { forEachReference, resolveReferences } from '../pipeline-spec/references';
import { PREPARED_STATE, type RouteStore } from './store';
import { cancelUnlessEnded } from './cancel-job';
import { linkActiveTrace } from './trace-links';

/**
 * Prepared submits: the next steps of a pipeline that can go without the workflow, written beside
 * the subscription of the job before them, so the bridge submits the next job as soon as the
 * completion's webhook is committed and tells the pipeline afterwards (docs/decisions/pipelines.md,
 * "Prepared submits"). Only a step whose input reads nothing but the completed job's result and
 * literals is prepared, only where the service honours Idempotency-Key: the key is the workflow's
 * own, so a pipeline that submits the step itself (it learned the completion by a poll, or the
 * bridge gave up) gets the same job.
 */

/** The chain and the submission are data of the contract, shared with the pipeline and the submit activity. */
export type { PreparedSubmission };

/** The signal that carries a completion together with the next job the bridge submitted. */
export const PREPARED_SIGNAL_NAME = SIGNAL_NAMES.preparedJobEvent;

/** The chain's first step with its references read from `result`; throws ReferenceResolutionError. */
function resolvePreparedInput(step: PreparedStep, result: JobResult): Record<string, unknown> {
  const outputs: Record<string, unknown> = {};
  forEachReference(step.input, ({ $from }) => (outputs[$from] = result));
  return resolveReferences(step.input, outputs);
}

/**
 * The first address-rule problem of the values `step`'s references read into `resolved` (its literals
 * were checked with the spec), as `<field>: <reason>`, or null. The bridge passes the service's own origin as allowed.
 */
function referencedUriProblem(step: PreparedStep, resolved: Record<string, unknown>, rules: UriRules): string | null {
  let problem: string | null = null;
  forEachReference(step.input, (_, at) => {
    const value = at.reduce<unknown>((into, key) => (into as Record<string | number, unknown>)?.[key], resolved);
    const reason = typeof value === 'string' ? uriProblem(value, rules) : null;
    if (reason) problem ??= `${at.join('.')}: ${reason}`;
  });
  return problem;
}

/** Options of the bridge's submitter. */
export interface PreparedSubmitterOptions {
  store: RouteStore;
  client: ServiceClient;
  /** The service's base URL: its own output URLs pass the address rules. */
  serviceOrigin: string;
  /** A take older than this is taken again (its bridge died between the take and the settle). Default 30 s. */
  takeLeaseMs?: number;
  now?: () => number;
  /** Told why a prepared submit was given up (the pipeline then submits the step itself). */
  onGiveUp?: (requestId: string, reason: string) => void;
}

/** The bridge's half of prepared submits. */
export interface PreparedSubmitter {
  /**
   * Submits the step prepared behind `requestId` (a completed job of `workflowId`) with the workflow's
   * key and subscribes the workflow to the new job, carrying the rest of the chain. Null when nothing
   * was prepared, the pipeline revoked it, or the submit failed: the completion is then forwarded alone.
   */
  submitNext(requestId: string, result: JobResult): Promise<PreparedSubmission | null>;
  /** Cancels a job this submitter submitted (its pipeline is gone); a job already terminal is left as it is. */
  cancel(submission: PreparedSubmission): Promise<void>;
}

/** The bridge's submitter over the route store and a service client holding the account's key. */
export function createPreparedSubmitter(options: PreparedSubmitterOptions): PreparedSubmitter {
  const { store, client } = options;
  const now = options.now ?? Date.now;
  const leaseMs = options.takeLeaseMs ?? 30_000;
  const giveUp = async (requestId: string, reason: string) => {
    options.onGiveUp?.(requestId, reason);
    await store.settlePrepared(requestId, null);
    return null;
  };
  return {
    async submitNext(requestId, result) {
      const taken = await store.takePrepared(requestId, now(), leaseMs);
      if (!taken) return null;
      const chain = JSON.parse(taken.chain) as PreparedChain;
      const [step, ...rest] = chain.steps;
      if (!step) return giveUp(requestId, 'the prepared chain is empty');
      let input: Record<string, unknown>;
      try {
        input = resolvePreparedInput(step, result);
      } catch (error) {
        return giveUp(requestId, (error as Error).message);
      }
      const rules = {
        ...chain.uriRules,
        allowedOrigins: [...(chain.uriRules?.allowedOrigins ?? []), options.serviceOrigin],
      };
      const problem = referencedUriProblem(step, input, rules);
      if (problem) return giveUp(requestId, `address rules: ${problem}`);
      let request: GenerationRequest;
      try {
        request = await client.submit(step.model, input as ModelInputs[ModelId], {
          idempotencyKey: step.idempotencyKey,
        });
      } catch (error) {
        // The pipeline submits with the same key: a job this POST created after all is the one it gets.
        return giveUp(requestId, `submit: ${(error as Error).message}`);
      }
      await linkActiveTrace(store, request.request_id, now());
      const bodies = await store.subscribe(
        { requestId: request.request_id, workflowId: taken.workflowId, signalName: SIGNAL_NAMES.jobEvent },
        now(),
        rest.length > 0 ? JSON.stringify({ ...chain, steps: rest }) : undefined,
      );
      const state = await store.settlePrepared(requestId, JSON.stringify(request));
      if (state === PREPARED_STATE.cancelledByBridge) {
        // The pipeline ended while this submit ran: it starts no later step, so the job is cancelled (refunded).
        await cancelUnlessEnded(client, request);
        return null;
      }
      return {
        idempotencyKey: step.idempotencyKey,
        request,
        earlyEvents: bodies.map((body) => JSON.parse(body) as WebhookEvent),
        ...(rest[0] ? { nextKey: rest[0].idempotencyKey } : {}),
      };
    },
    cancel: (submission) => cancelUnlessEnded(client, submission.request),
  };
}
