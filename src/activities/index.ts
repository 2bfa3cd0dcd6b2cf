import { Context } from '@temporalio/activity';
import type { ApplicationFailure } from '@temporalio/common';
import {
  FAILURE_TYPES,
  SUBMIT_MAX_ATTEMPTS,
  tablePrice,
  describeFieldErrors,
  type CancelResponse,
  type FieldError,
  type GenerationRequest,
  type JobResult,
  type ModelId,
  type ModelInputs,
  type StatusResponse,
  type UriRules,
  type WebhookEvent,
  type PreparedChain,
} from '../contract';
import { validatePipelineSpec } from '../pipeline-spec/spec';
import { setTimeout as sleep } from 'node:timers/promises';
import { tooLateToCancel } from '../client/errors';
import type { AccountSlots } from '../routing/account-slots';
import {
  SLOT_PRIORITY_DEFAULT,
  WAITER_SUBMIT_MAX_BYTES,
  waiterSubmitValid,
  type SlotRequest,
} from '../routing/slot-store';
import { guardedSubmit } from './submit-guard';
import { candidateOrphans } from './candidates';
import { recordSubmitted, submittedByEarlierAttempt } from './submitted-record';
import type { CallKind, ServiceClient } from '../client/types';
import { toApplicationFailure } from './errors';
import { createInputResolver, createMediaActivities, hasMedia, type MediaActivities, type MediaDeps } from './media';
import type { RevokedPrepared } from '../routing/store';
import { PREPARED_STATE } from '../routing/store';
import {
  createPreflightActivities,
  type PreflightActivities,
  type PreflightFailureDetails,
  type PreflightOptions,
} from './preflight';
import { createBatchActivities, type BatchActivities } from './batch';
import { createOpActivities, type OpActivities } from './ops';
import { workerMetrics, type WorkerMetrics } from '../metrics/definitions';

export { toApplicationFailure, type ServiceFailureDetails } from './errors';
export type { ArchiveRequest, MediaDeps } from './media';
export type { OpActivities } from './ops';
export type { PreparedChain, PreparedStep, PreparedSubmission } from '../contract';

/** What the activities need: the service client and the webhook subscription (bridge). */
export interface ActivityDeps {
  client: ServiceClient;
  /**
   * The pipeline's subscription to a request's events, returning the events that came first: a row in
   * the route store (`createRouteSubscriber`, src/routing/subscriber.ts).
   */
  routes: {
    subscribe(
      requestId: string,
      subscriberWorkflowId: string,
      options?: { prepared?: PreparedChain },
    ): Promise<WebhookEvent[]>;
    /** Present when the store keeps prepared submits (the bridge may submit a pipeline's next step). */
    revokePrepared?(requestId: string): Promise<RevokedPrepared | null>;
  };
  /** Called once per activity call of each kind; tests and benchmarks count status polls with it. */
  onCall?: (kind: CallKind) => void;
  /** Heartbeat period while a call is in flight (the client may be backing off inside). Default 5 s. */
  heartbeatEveryMs?: number;
  /** Where service calls, polls, submissions and charged credits are counted. Default: the process registry. */
  metrics?: WorkerMetrics;
  /** The media store: references in inputs are resolved at the call, outputs archived. */
  media?: MediaDeps;
  /** Settings of the preflight activity; `trustedOrigins` should name the service's own origin. */
  preflight?: PreflightOptions;
  /**
   * The account's slots in the route store (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY);
   * absent or uncapped: a submit takes none.
   */
  slots?: AccountSlots;
}

/** Failure types of a submit after which a job may exist. */
const MAY_HAVE_CREATED = new Set<string>([FAILURE_TYPES.ambiguousSubmission, FAILURE_TYPES.submitAnswerInvalid]);

/** How often `awaitAccountPermit` (kept for pipelines of earlier builds, which wait in an activity) asks again. */
const PERMIT_ASK_EVERY_MS = 1_000;

/** A quote as the workflows use it. */
export interface JobQuote {
  credits: number;
  pricingUnit: 'per-output-second' | 'per-request';
}

/** Input of `submitAndSubscribe`: one attempt of a pipeline step. */
export interface SubmitRequest {
  model: ModelId;
  input: Record<string, unknown>;
  idempotencyKey: string;
  /** The pipeline workflow that receives this request's webhook events. */
  subscriberWorkflowId: string;
  /**
   * The steps after this one that the bridge may submit once this job completes (src/routing/prepared.ts).
   * Written with the subscription only where it is safe: the service honours Idempotency-Key, no account
   * cap needs a permit, no input holds a media reference, and the route store can revoke it.
   */
  prepareNext?: PreparedChain;
  /** How the submit queues for one of the account's slots when none is free (absent: defaults, from the activity's run). */
  slot?: SlotAsk;
}

/** A submit's place in the queue for the account's slots (src/routing/slot-store.ts). */
export interface SlotAsk {
  /** The run to signal `slotGranted` when a slot is granted to it. */
  runId: string;
  /** 1 (highest) … 5; default 3. */
  priority?: number;
  /** Default: the subscriber workflow's id. */
  fairnessKey?: string;
  /** Default 1. */
  weight?: number;
}

/**
 * What `submitAndSubscribe` returns: the service's answer and any events that overtook it (`permit`
 * when the submission holds one of the account's slots, which the workflow releases once the job is
 * terminal), or `atCapacity` when no slot was free and nothing was sent: the submission is queued, and
 * its workflow waits for the `slotGranted` signal before it submits again.
 */
export type SubmitAnswer =
  | {
      request: GenerationRequest;
      earlyEvents: WebhookEvent[];
      permit?: true;
      /** The Idempotency-Key of the step prepared behind this job, when `prepareNext` was written. */
      preparedKey?: string;
      atCapacity?: undefined;
    }
  | { atCapacity: true };

/** A submission waiting for, or releasing, one of the account's permits. */
export interface PermitRequest {
  idempotencyKey: string;
  workflowId: string;
}

/** The spec's validation inside `checkPipeline`'s answer, plain data (field path + reason for each problem). */
export type PipelineCheck = { ok: true } | { ok: false; errors: FieldError[]; message: string };

/** A step whose literal inputs preflight refused (or could not check after its retries). */
export interface PreflightRefusal {
  /** The step's index in the spec. */
  index: number;
  /** Paths inside the step's input (`audio_url`), or `(input)` when the input could not be checked. */
  problems: FieldError[];
}

/**
 * How a pipeline's submits run. `local-activity`: in the workflow task that asks for it (a marker, no
 * activity task, no workflow task of its own); a worker that dies mid-submit makes the next one send
 * it again with the same Idempotency-Key, so only where the service honours the key. `activity`:
 * an activity task, whose attempts remember across a lost worker what they sent.
 */
export type SubmitAs = 'activity' | 'local-activity';

/**
 * `checkPipeline`'s answer: the spec's validation, then (when it passed) the preflight of the steps
 * asked for, and how this worker's submits run (its service client's idempotency setting decides;
 * the marker keeps the answer, so every later task of the pipeline runs them the same way).
 */
export type PipelineChecks =
  Exclude<PipelineCheck, { ok: true }> | { ok: true; refused: PreflightRefusal[]; submitAs: SubmitAs };

/** Attempts of one step's preflight while its input cannot be checked now (PreflightUnavailable), and the wait before each retry. */
const PREFLIGHT_ATTEMPTS = 3;
const PREFLIGHT_RETRY_MS = 1_000;

/** The activities registered on the reelflow worker. Thin wrappers over the service client. */
export interface ReelflowActivities extends MediaActivities, PreflightActivities, BatchActivities, OpActivities {
  /**
   * Submits with the Idempotency-Key, then subscribes the pipeline to the request's webhook events:
   * one activity per attempt. A retry (after a crash) with the same key returns the same job.
   */
  submitAndSubscribe(request: SubmitRequest): Promise<SubmitAnswer>;
  /**
   * Revokes the submits prepared behind these jobs (the pipeline starts no later step); a job the bridge
   * already submitted is cancelled at the service (refunded). Returns the request ids it cancelled.
   */
  revokePreparedSubmits(requestIds: string[]): Promise<string[]>;
  /** Waits (cancellable, heartbeating) until the account has a permit for this submission; it then holds it. */
  awaitAccountPermit(request: PermitRequest): Promise<void>;
  /** Gives the submission's permit back (its job is terminal, or it was never submitted); harmless twice. */
  releaseAccountPermit(idempotencyKey: string): Promise<void>;
  /**
   * Everything a pipeline checks before anything is paid, as one local activity (one marker in the
   * pipeline's first workflow task): the spec's validation, then the preflight of the steps at
   * `preflightSteps` (their literal inputs, all steps at once). A refusal is an answer, not a failure.
   */
  checkPipeline(
    spec: unknown,
    uriRules: UriRules | undefined,
    preflightSteps: readonly number[],
  ): Promise<PipelineChecks>;
  quoteJob(model: ModelId, input: Record<string, unknown>): Promise<JobQuote>;
  /** Request ids the account ledger charged since `sinceIso` that are not in `exclude` (candidate orphans of an ambiguous submit). */
  candidateOrphans(sinceIso: string, exclude: string[]): Promise<string[]>;
  pollJobStatus(requestId: string, statusUrl?: string): Promise<StatusResponse>;
  fetchJobResult(requestId: string, responseUrl?: string): Promise<JobResult>;
  /** Asks the service to cancel; a job already terminal answers with its state instead of an error. */
  cancelJob(requestId: string, cancelUrl?: string): Promise<CancelResponse>;
}

/** Logs through the activity's logger (which adds workflowId and activityType); silent outside an activity. */
function logInActivity(message: string, fields: Record<string, unknown>): void {
  try {
    Context.current().log.info(message, fields);
  } catch {
    // Called directly from a script, not as an activity: there is no context to log through.
  }
}

/** Heartbeats when called inside an activity. */
function heartbeat(): void {
  try {
    Context.current().heartbeat();
  } catch {
    // Not inside an activity.
  }
}

/** What the activities share: the service client, the metrics, the call wrapper and the input resolver. */
interface ServiceCalls {
  readonly client: ServiceClient;
  readonly metrics: WorkerMetrics;
  /** Media references in an input made URLs or data URIs, at the call: never in workflow history. */
  readonly sendable: ReturnType<typeof createInputResolver>;
  /** How long the media store's signed URLs live (a queued submit's resolved input is kept for half of it). */
  readonly urlLifetimeSeconds?: number;
  /** Runs a service call as an activity's (callWrapper). */
  readonly wrap: <T>(kind: CallKind | 'subscribe', call: () => Promise<T>) => Promise<T>;
}

/** Builds the activities over `deps`. */
export function createActivities(deps: ActivityDeps): ReelflowActivities {
  const { client } = deps;
  const metrics = deps.metrics ?? workerMetrics();
  const sendable = createInputResolver(deps.media);
  const wrap = callWrapper(deps.heartbeatEveryMs ?? 5_000, metrics, deps.onCall);
  const calls: ServiceCalls = {
    client,
    metrics,
    sendable,
    wrap,
    ...(deps.media ? { urlLifetimeSeconds: deps.media.urlLifetimeSeconds } : {}),
  };
  const preflight = createPreflightActivities(deps.preflight);
  const refusal = (errors: FieldError[]) => ({ ok: false as const, errors, message: describeFieldErrors(errors) });

  return {
    ...createMediaActivities(deps.media),
    ...preflight,
    ...createBatchActivities(deps.media),
    ...createOpActivities(deps.media),
    ...submitActivities(calls, deps.routes, deps.slots),
    candidateOrphans(sinceIso, exclude) {
      // An account read, not a job call: kept out of the per-kind call counts (as subscribing is).
      return wrap('subscribe', () => candidateOrphans(client, sinceIso, exclude));
    },
    async checkPipeline(spec, uriRules, preflightSteps) {
      const checked = validatePipelineSpec(spec, uriRules);
      if (!checked.ok) return refusal(checked.errors);
      const { steps } = checked.value;
      const refused = await Promise.all(
        preflightSteps.flatMap((index) => {
          const step = steps[index];
          return step && 'model' in step
            ? [preflightProblems(preflight, step.model, step.input).then((problems) => ({ index, problems }))]
            : [];
        }),
      );
      return {
        ok: true,
        refused: refused.filter((r) => r.problems.length > 0),
        submitAs: client.idempotency === 'honoured' ? 'local-activity' : 'activity',
      };
    },
    async quoteJob(model, input) {
      // A model priced by the contract's table is priced by the same rule the service charges by: no call.
      const byTable = tablePrice(model, input);
      if (byTable !== undefined) return { credits: byTable, pricingUnit: 'per-request' };
      const sent = await sendable(input);
      const quote = await wrap('quote', () => client.quote(model, sent as ModelInputs[typeof model]));
      return { credits: quote.credits, pricingUnit: quote.pricing_unit };
    },
    async pollJobStatus(requestId, statusUrl) {
      const status = await wrap('status', () => client.status(requestId, statusUrl ? { statusUrl } : {}));
      metrics.polls.inc({ status: status.status });
      return status;
    },
    async fetchJobResult(requestId, responseUrl) {
      const result = await wrap('result', () => client.result(requestId, responseUrl ? { responseUrl } : {}));
      logInActivity('job result fetched', {
        requestId,
        model: result.model,
        outputs: result.videos.length,
        creditsUsed: result.credits_used,
      });
      return result;
    },
    cancelJob: (requestId, cancelUrl) => cancelJob(calls, requestId, cancelUrl),
  };
}

/**
 * Runs `call`, heartbeating while it waits and mapping client errors to ApplicationFailure. The
 * first beat comes one period in, not at once: a call that answers quickly (the submit POST on the
 * hand-off path) costs no heartbeat RPC competing with it.
 */
function callWrapper(every: number, metrics: WorkerMetrics, onCall: ActivityDeps['onCall']): ServiceCalls['wrap'] {
  return async (kind, call) => {
    if (kind !== 'subscribe') onCall?.(kind);
    let timer: NodeJS.Timeout | undefined;
    try {
      const context = Context.current();
      // Beat well inside the heartbeat timeout the workflow chose, however short.
      const timeoutMs = context.info.heartbeatTimeoutMs;
      const period = timeoutMs ? Math.min(every, Math.max(100, timeoutMs / 3)) : every;
      timer = setInterval(() => context.heartbeat(), period);
    } catch {
      // Not inside an activity (direct call in a script): nothing to heartbeat.
    }
    try {
      const value = await call();
      if (kind !== 'subscribe') metrics.serviceCalls.inc({ kind, outcome: 'ok' });
      return value;
    } catch (error) {
      if (kind !== 'subscribe') metrics.serviceCalls.inc({ kind, outcome: 'error' });
      if (kind === 'status') metrics.polls.inc({ status: 'error' });
      throw toApplicationFailure(error);
    } finally {
      if (timer) clearInterval(timer);
    }
  };
}

/** The job the process that granted this submission's slot submitted for it, counted here as this worker's submit. */
function adoptedAhead(calls: ServiceCalls, model: ModelId, request: GenerationRequest): void {
  calls.metrics.submitted.inc({ model });
  logInActivity('job submitted for it with its slot adopted', { requestId: request.request_id, model });
}

async function submitJob(
  calls: ServiceCalls,
  model: ModelId,
  input: Record<string, unknown>,
  idempotencyKey: string,
): Promise<GenerationRequest> {
  const sent = await calls.sendable(input);
  const request = await calls.wrap('submit', () =>
    guardedSubmit(calls.client, model, sent as ModelInputs[typeof model], idempotencyKey),
  );
  calls.metrics.submitted.inc({ model });
  logInActivity('job submitted', { requestId: request.request_id, model });
  return request;
}

/** One step's preflight: its problems (none when it passed); an input that cannot be checked now is tried again. */
async function preflightProblems(
  preflight: PreflightActivities,
  model: ModelId,
  input: Record<string, unknown>,
): Promise<FieldError[]> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await preflight.preflightJob(model, input);
      return [];
    } catch (error) {
      const failure = error as ApplicationFailure;
      if (failure.type === FAILURE_TYPES.preflightRefused)
        return (failure.details?.[0] as PreflightFailureDetails | undefined)?.problems ?? [];
      if (failure.type !== FAILURE_TYPES.preflightUnavailable) throw error;
      if (attempt >= PREFLIGHT_ATTEMPTS) return [{ path: '(input)', message: failure.message }];
      heartbeat();
      await sleep(PREFLIGHT_RETRY_MS * 2 ** (attempt - 1));
    }
  }
}

/** Asks the service to cancel; too late to cancel (terminal already) is an answer, not a failure. */
function cancelJob(calls: ServiceCalls, requestId: string, cancelUrl?: string): Promise<CancelResponse> {
  return calls.wrap('cancel', async () => {
    try {
      return await calls.client.cancel(requestId, cancelUrl ? { cancelUrl } : {});
    } catch (error) {
      const status = tooLateToCancel(error);
      if (status) return { request_id: requestId, status };
      throw error;
    }
  });
}

/** The slot request of a submit: its ask, with defaults from the activity's own run. */
function slotRequest(
  model: ModelId,
  idempotencyKey: string,
  workflowId: string,
  ask: SlotAsk | undefined,
): SlotRequest {
  let runId = ask?.runId;
  if (!runId) {
    try {
      runId = Context.current().info.workflowExecution?.runId ?? '';
    } catch {
      runId = '';
    }
  }
  return {
    holder: idempotencyKey,
    workflowId,
    runId,
    model,
    priority: ask?.priority ?? SLOT_PRIORITY_DEFAULT,
    fairnessKey: ask?.fairnessKey ?? workflowId,
    weight: ask?.weight ?? 1,
  };
}

/**
 * Keeps a queued job's submit beside its place in the queue, so the process that frees a slot for it
 * submits it at once (src/routing/account-slots.ts): only where the service honours Idempotency-Key
 * (the pipeline adopts that job by its key), with its media references resolved now (signed URLs
 * count as valid for half their lifetime) and small enough to keep in the route store. Best effort:
 * without it the pipeline submits after its grant, as it would have.
 */
async function keepWaiterSubmit(
  calls: ServiceCalls,
  slots: AccountSlots,
  model: ModelId,
  input: Record<string, unknown>,
  idempotencyKey: string,
): Promise<void> {
  if (calls.client.idempotency !== 'honoured') return;
  try {
    const sent = await calls.sendable(input);
    if (Buffer.byteLength(JSON.stringify(sent)) > WAITER_SUBMIT_MAX_BYTES) return;
    const validFor = hasMedia(input) ? (calls.urlLifetimeSeconds ?? 0) * 500 : undefined;
    await slots.keepSubmit(idempotencyKey, {
      model,
      input: sent,
      ...(validFor !== undefined ? { validUntil: Date.now() + validFor } : {}),
    });
  } catch {
    // Nothing kept: the pipeline resolves and submits after its grant (and meets the same error, if any).
  }
}

/**
 * What the process that granted this slot did with the submit kept for it: the job it submitted (the
 * pipeline adopts it, sending nothing), else the input to send as it was kept (while its media URLs are
 * valid: a releaser whose POST failed may have created a job bound to that body), else nothing.
 */
async function grantedAhead(
  slots: AccountSlots,
  idempotencyKey: string,
): Promise<{ request?: GenerationRequest; sent?: Record<string, unknown> }> {
  const { request, submit } = await slots.ahead(idempotencyKey);
  if (request) return { request };
  if (submit && waiterSubmitValid(submit, Date.now())) return { sent: submit.input };
  return {};
}

/**
 * Whether a failed submit keeps its slot for the retry Temporal will run: a retryable failure before
 * the activity's last attempt. Given back, the slot would go to the next waiter, the retry would queue
 * and end the activity `atCapacity`, and its attempts would start again after the wait: 429s would
 * never reach the bound after which a batch pauses (src/workflows/steps/job/account-refusal.ts).
 * The policy is the activity's own when the server tells it (the time-skipping test server does not);
 * else the one every reelflow workflow schedules the submit with.
 */
function retriedWithSlot(error: unknown): boolean {
  const failure = error as Partial<ApplicationFailure>;
  if (failure.nonRetryable === true) return false;
  let info: ReturnType<typeof Context.current>['info'];
  try {
    info = Context.current().info;
  } catch {
    return false;
  }
  const policy = info.retryPolicy;
  if (failure.type && policy?.nonRetryableErrorTypes?.includes(failure.type)) return false;
  // A policy without maximumAttempts (or 0) retries without limit.
  const attempts = policy ? policy.maximumAttempts : SUBMIT_MAX_ATTEMPTS;
  return !attempts || info.attempt < attempts;
}

/** Submitting a step and subscribing it to its events, the prepared submits behind it and the account's slots. */
function submitActivities(
  calls: ServiceCalls,
  routes: ActivityDeps['routes'],
  slots: AccountSlots | undefined,
): Pick<
  ReelflowActivities,
  'submitAndSubscribe' | 'revokePreparedSubmits' | 'awaitAccountPermit' | 'releaseAccountPermit'
> {
  return {
    async submitAndSubscribe({ model, input, idempotencyKey, subscriberWorkflowId, prepareNext, slot }) {
      let request = submittedByEarlierAttempt();
      const permit = slots?.capped === true;
      let sent: Record<string, unknown> | undefined;
      if (!request && permit) {
        // One transaction: a slot now, or a place in the queue; the wait itself is the workflow's
        // (a signal, where a cancel reaches it), never this activity's.
        const slotState = await slots.acquire(slotRequest(model, idempotencyKey, subscriberWorkflowId, slot));
        if (slotState === 'waiting') {
          await keepWaiterSubmit(calls, slots, model, input, idempotencyKey);
          return { atCapacity: true };
        }
        if (slotState === 'held') ({ request, sent } = await grantedAhead(slots, idempotencyKey));
        if (request) adoptedAhead(calls, model, request);
      }
      if (!request) {
        try {
          request = await submitJob(calls, model, sent ?? input, idempotencyKey);
        } catch (error) {
          // A submit that provably created no job gives its slot back, unless Temporal runs it again: the
          // retry asks for it again (one slot per key). One that may have created a job (ambiguous, or
          // accepted with a broken answer) keeps it until the workflow settles what became of it.
          if (permit && !MAY_HAVE_CREATED.has((error as ApplicationFailure).type ?? '') && !retriedWithSlot(error))
            await slots.release(idempotencyKey);
          throw error;
        }
      }
      const prepared =
        prepareNext?.steps[0] &&
        calls.client.idempotency === 'honoured' &&
        !permit &&
        routes.revokePrepared &&
        !hasMedia(prepareNext.steps.map((step) => step.input))
          ? prepareNext
          : undefined;
      try {
        if (permit) await calls.wrap('subscribe', () => slots.attachRequest(idempotencyKey, request.request_id));
        const earlyEvents = await calls.wrap('subscribe', () =>
          routes.subscribe(
            (request as GenerationRequest).request_id,
            subscriberWorkflowId,
            prepared ? { prepared } : {},
          ),
        );
        return {
          request,
          earlyEvents,
          ...(permit ? { permit: true as const } : {}),
          ...(prepared ? { preparedKey: prepared.steps[0]!.idempotencyKey } : {}),
        };
      } catch (error) {
        recordSubmitted(request);
        throw error;
      }
    },
    async revokePreparedSubmits(requestIds) {
      const cancelled: string[] = [];
      for (const requestId of requestIds) {
        const revoked = await calls.wrap('subscribe', async () => (await routes.revokePrepared?.(requestId)) ?? null);
        if (revoked?.state !== PREPARED_STATE.submitted || !revoked.answer) continue;
        const request = JSON.parse(revoked.answer) as GenerationRequest;
        await cancelJob(calls, request.request_id, request.cancel_url);
        cancelled.push(request.request_id);
      }
      return cancelled;
    },
    async awaitAccountPermit({ idempotencyKey, workflowId }) {
      // Pipelines of earlier builds wait here instead of for the signal: their queued row is asked
      // about again (an idempotent acquire) until it was granted.
      if (!slots?.capped) return;
      const { cancellationSignal, info } = Context.current();
      // Its row is there already (the submit queued it); a wait begun before slots existed names no model.
      const request = slotRequest('' as ModelId, idempotencyKey, workflowId, {
        runId: info.workflowExecution?.runId ?? '',
      });
      while ((await slots.acquire(request)) === 'waiting') {
        heartbeat();
        await sleep(PERMIT_ASK_EVERY_MS, undefined, { signal: cancellationSignal });
      }
    },
    async releaseAccountPermit(idempotencyKey) {
      await slots?.release(idempotencyKey);
    },
  };
}
