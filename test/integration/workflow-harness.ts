import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Worker, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Priority } from '@temporalio/common';
import type { MediaDeps } from '../../src/activities';
import { putJsonLines, readJsonLines } from '../../src/media/json-lines';
import type { MediaStore } from '../../src/media/store';
import type { PipelineSpec } from '../../src/pipeline-spec/spec';
import { batchWorkflowId } from '../../src/workflows/definitions';
import type { BatchItemResult, BatchProgress, BatchWorkflowInput } from '../../src/workflows/batch-types';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { API_VERSION, EVENT_TYPES, type WebhookEvent } from '../../src/contract';
import { createServiceClient } from '../../src/client/service-client';
import { serviceResponseMetrics } from '../../src/metrics/definitions';
import type { CallKind, ServiceClient } from '../../src/client/types';
import type { IdempotencySetting } from '../../src/client/submit-policy';
import { signedHeaders } from '../../src/contract/signature';
import { STACK_ENDPOINT_EVENTS } from '../../src/stack/webhook-endpoint';
import { startRegisteredBridge } from '../helpers/registered-bridge';
import { testRouteStore } from '../helpers/route-store';
import { request } from 'undici';
import { createReelflowWorker, mediaFromEnv } from '../../src/workers/worker';
import { bundleProductionWorkflows } from '../../src/workers/workflow-bundle';
import { defaultBuildId, setCurrentVersion } from '../../src/workers/worker-deployment';
import { startTestService, TEST_API_KEY, type TestService } from '../helpers/local-service';
import type { LocalServiceOptions } from '../../src/local-service';
import type { AccountLimits } from '../../src/client/account-limits';
import type { SlotCaps } from '../../src/routing/slot-store';

/**
 * Shared parts of the workflow integration tests: the real local service, a real reelflow worker
 * and the real webhook bridge registered with that service (startTestBridge), so outcomes arrive as
 * the service's signed deliveries.
 */

/** The worker's workflow bundle, built as production builds it (production mode, no source map). */
export function bundleReelflowWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleProductionWorkflows();
}

export { silentWavDataUri } from '../helpers/inputs';

/** Builds the `generation.completed` event the service would send, from the fetched result. */
export async function completionEvent(
  client: ServiceClient,
  requestId: string,
  eventId = `evt_test_${requestId}`,
): Promise<WebhookEvent> {
  const result = await client.result(requestId);
  return {
    event_id: eventId,
    event_type: EVENT_TYPES.completed,
    api_version: API_VERSION,
    created_at: new Date().toISOString(),
    request_id: requestId,
    status: 'OK',
    data: { ...result, gateway_request_id: requestId, output_count: result.videos.length },
    error: null,
  };
}

/**
 * The real webhook bridge (src/bridge, started as the stack starts it) registered with the local
 * service as its webhook endpoint, so pipelines learn outcomes from the service's own signed deliveries.
 */
export interface TestBridge {
  /** The bridge's webhook URL (the endpoint registered at the service). */
  url: string;
  endpointId: string;
  /** Whether the service's delivery of an event of `requestId` to this bridge succeeded (the service's own records). */
  deliveredFor(requestId: string): boolean;
  /**
   * Signs `event` with the endpoint's secret exactly as the service does and POSTs it to the bridge:
   * a redelivery, a late or reordered event. Resolves with the bridge's HTTP status.
   */
  deliver(event: WebhookEvent): Promise<number>;
  /**
   * `false`: the service drops every delivery from now on (its dropped-delivery fault, journalled), a
   * dead webhook path; `true` sends again. Events of jobs that ended while disabled are never sent.
   */
  setEnabled(enabled: boolean): void;
  stop(): Promise<void>;
}

/**
 * Starts the real bridge on `taskQueue`, registered with `service` for the event kinds the local
 * stack registers (completed, failed, cancelled), or `events` when a test needs fewer.
 */
export async function startTestBridge(
  service: TestService,
  env: TestWorkflowEnvironment,
  taskQueue: string,
  options: {
    events?: readonly string[];
    submits?: boolean;
    slotCaps?: { account?: number; models: Readonly<Record<string, number>> };
  } = {},
): Promise<TestBridge> {
  const { bridge, endpointId, secret } = await startRegisteredBridge({
    ...(options.submits === false ? { submits: false } : {}),
    ...(options.slotCaps ? { slotCaps: options.slotCaps } : {}),
    serviceUrl: service.url,
    temporalAddress: env.address,
    taskQueue,
    events: options.events ?? STACK_ENDPOINT_EVENTS,
  });
  let stopped: Promise<void> | undefined;
  return {
    url: bridge.url,
    endpointId,
    deliveredFor: (requestId) =>
      service.service
        .deliveries()
        .some((d) => d.requestId === requestId && d.endpointId === endpointId && d.state === 'delivered'),
    deliver: async (event) => {
      const body = JSON.stringify(event);
      const headers = signedHeaders({
        id: event.event_id,
        timestamp: Math.floor(Date.now() / 1000),
        body,
        secrets: [secret],
        eventType: event.event_type,
      });
      const response = await request(bridge.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      await response.body.dump();
      return response.statusCode;
    },
    setEnabled: (enabled) => service.service.setFaults({ dropDeliveryRate: enabled ? 0 : 1 }),
    stop: () =>
      (stopped ??= (async () => {
        await service.call('DELETE', `/v1/webhooks/endpoints/${endpointId}`).catch(() => undefined);
        await bridge.close();
      })()),
  };
}

export interface Harness {
  service: TestService;
  client: ServiceClient & { close(): Promise<void> };
  /** A second client for the test's own calls, so they do not count as the worker's. */
  sideClient: ServiceClient & { close(): Promise<void> };
  /** Activity calls made by the worker, by kind. */
  calls: Record<CallKind, number>;
  taskQueue: string;
  /** The running worker (started here, shut down by close()). */
  worker: Worker;
  /** The worker's media store (batches keep their manifests and results there). */
  media: MediaDeps;
  close(): Promise<void>;
}

/**
 * Starts a local service and a running reelflow worker against `env` (with the account's `limits` when
 * given; its client's `idempotency` setting, default `unknown`).
 */
export async function startHarness(
  env: TestWorkflowEnvironment,
  bundle: WorkflowBundleWithSourceMap,
  taskQueue: string,
  serviceOptions: Partial<LocalServiceOptions> = {},
  options: { limits?: AccountLimits; idempotency?: IdempotencySetting; slotCaps?: SlotCaps } = {},
): Promise<Harness> {
  const service = await startTestService(serviceOptions);
  const fast = { maxAttempts: 2, initialDelayMs: 50, maxDelayMs: 200, jitter: 0 };
  const client = createServiceClient({
    baseUrl: service.url,
    apiKey: TEST_API_KEY,
    retry: fast,
    submitRetry: fast,
    ...(options.limits ? { rateGate: options.limits } : {}),
    ...(options.idempotency ? { idempotency: options.idempotency } : {}),
    // As the worker process counts them (src/workers/worker.ts).
    onResponse: serviceResponseMetrics(),
  });
  const sideClient = createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY, retry: fast });
  const calls: Record<CallKind, number> = { submit: 0, status: 0, result: 0, cancel: 0, quote: 0 };
  // REELFLOW_MEDIA_STORE when a test sets it (shared with CLI child processes), else a store in the service's data dir.
  const media = mediaFromEnv(service.url, { ...process.env, REELFLOW_STATE_DIR: service.dataDir });
  // Versioned as production runs it (pipelines pinned), one deployment per task queue, made current here.
  const deployment = { deploymentName: `reelflow-${taskQueue}`, buildId: defaultBuildId(bundle.code) };
  const worker = await createReelflowWorker({
    connection: env.nativeConnection,
    client: env.client,
    taskQueue,
    service: client,
    workflowBundle: bundle,
    onCall: (kind) => (calls[kind] += 1),
    preflight: { trustedOrigins: [service.url] },
    media,
    deployment,
    routeStore: testRouteStore(taskQueue),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.slotCaps ? { slotCaps: options.slotCaps } : {}),
  });
  const running = worker.run();
  await setCurrentVersion(env.client, deployment);
  return {
    service,
    client,
    sideClient,
    calls,
    taskQueue,
    worker,
    media,
    close: async () => {
      worker.shutdown();
      await running;
      await client.close();
      await sideClient.close();
      await service.close();
    },
  };
}

/** What a test batch runs: its specs and the workflow's options (the manifest is written to the store here). */
export interface TestBatch extends Omit<BatchWorkflowInput, 'manifest'> {
  specs: PipelineSpec[];
  /** Temporal priority of the batch (its items inherit it): as `reelflow batch --priority/--fairness-*` sets it. */
  priority?: Priority;
}

/**
 * Starts a paged batch the way `reelflow batch` does: the specs as a JSON Lines manifest in the
 * media store (`pageSize` items a page), the workflow given its digest and page offsets.
 */
export async function startTestBatch(
  client: Client,
  taskQueue: string,
  store: MediaStore,
  { specs, priority, ...options }: TestBatch,
  pageSize = 100,
): Promise<WorkflowHandle> {
  const workflowId = batchWorkflowId(options.name);
  const manifest = await putJsonLines(
    store,
    specs.map((spec, index) => ({ index, spec })),
    workflowId,
    pageSize,
  );
  const input: BatchWorkflowInput = { ...options, manifest };
  return client.workflow.start('batchWorkflow', {
    taskQueue,
    workflowId,
    args: [input],
    ...(priority ? { priority } : {}),
  });
}

/** Every result of a paged batch: its result pages read from the store, and those not yet written. */
export async function testBatchResults(progress: BatchProgress, store: MediaStore): Promise<BatchItemResult[]> {
  const paged: BatchItemResult[] = [];
  for (const sha256 of progress.resultPages ?? [])
    paged.push(...((await readJsonLines(store, sha256)) as BatchItemResult[]));
  return [...paged, ...progress.results];
}

/** Waits for `predicate`, checking every 50 ms (a condition, not a timing assertion). */
export async function eventually<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * When RECORD_HISTORIES=1, saves the workflow's history (handle.fetchHistory()) for the replay test.
 * The history is kept as base64 protobuf inside JSON: the installed SDK's proto3-JSON helpers
 * (historyToJSON / historyFromJSON) fail on a duplicated protobufjs, the binary form does not.
 * `eventTypes` is there for a person reading the file.
 */
export async function maybeRecordHistory(handle: WorkflowHandle, name: string): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const history = await handle.fetchHistory();
  const dir = path.join(__dirname, '..', 'replay', 'histories', 'current');
  fs.mkdirSync(dir, { recursive: true });
  const events = history.events ?? [];
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  const record = {
    workflowId: handle.workflowId,
    workflowType: started?.workflowType?.name ?? null,
    encoding: 'protobuf-base64',
    eventTypes: events.map((e) => temporal.api.enums.v1.EventType[e.eventType ?? 0]),
    history: Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('base64'),
  };
  fs.writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(record, null, 1)}\n`);
}
