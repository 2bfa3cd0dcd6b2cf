import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { startMetricsServer, type MetricsServer } from '../metrics/server';
import { createActivities, type MediaDeps } from '../activities';
import { loadMediaSettings } from '../config/media';
import { openMediaStore } from '../media/store';
import type { PreflightOptions } from '../activities/preflight';
import { createSubscribeActivity } from '../bridge/subscribe-activity';
import { subscribeToRoute } from '../bridge/route-client';
import { createServiceClient } from '../client/service-client';
import type { CallKind, ServiceClient } from '../client/types';
import { connectionOptions } from '../config/temporal';
import { loadEnvWithService } from '../config/env';
import { createSdkLogger, sdkLogLevel } from './logging';
import { bundleProductionWorkflows } from './workflow-bundle';

/** Options of a reelflow worker built in-process (tests, the local stack) or by the entry point. */
export interface ReelflowWorkerOptions {
  /** Worker-side connection to Temporal. */
  connection: NativeConnection;
  /** Client used by the subscribe activity (signal-with-start of the rendezvous). */
  client: Client;
  taskQueue: string;
  namespace?: string;
  service: ServiceClient;
  /** A prebuilt bundle (tests bundle once per file); otherwise the workflows are bundled from source at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  onCall?: (kind: CallKind) => void;
  /** Extra worker options (concurrency limits, shutdown grace, ...). */
  worker?: Partial<WorkerOptions>;
  /** The media store; default: the one the environment configures (REELFLOW_MEDIA_STORE). */
  media?: MediaDeps;
  /** Settings of the preflight activity; `trustedOrigins` should name the service's own origin. */
  preflight?: PreflightOptions;
}

/** The media store the environment configures, for a worker talking to `serviceUrl`. */
export function mediaFromEnv(serviceUrl?: string, env: NodeJS.ProcessEnv = process.env): MediaDeps {
  return { ...openMediaStore(loadMediaSettings(env)), ...(serviceUrl ? { serviceOrigin: serviceUrl } : {}) };
}

/** Creates the worker that runs every reelflow workflow and activity on `taskQueue`. */
export async function createReelflowWorker(options: ReelflowWorkerOptions): Promise<Worker> {
  const activities = createActivities({
    client: options.service,
    subscribe: createSubscribeActivity(options.client, options.taskQueue),
    routes: { subscribe: (requestId, subscriber) => subscribeToRoute({ client: options.client, taskQueue: options.taskQueue }, requestId, subscriber) },
    ...(options.onCall ? { onCall: options.onCall } : {}),
    media: options.media ?? mediaFromEnv(),
    ...(options.preflight ? { preflight: options.preflight } : {}),
  });
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? options.client.options.namespace,
    taskQueue: options.taskQueue,
    // Without a prebuilt bundle, bundle here the way the build does (production mode, no source map).
    workflowBundle: options.workflowBundle ?? (await bundleProductionWorkflows()),
    activities,
    shutdownGraceTime: '10 seconds',
    ...options.worker,
  });
}

/** Reads an optional positive whole number from the environment; the error names the variable. */
function positiveInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1) throw new Error(`${name}: must be a whole number >= 1`);
  return Number(text);
}

/**
 * Production tuning from the environment: concurrency, sticky cache, shutdown grace and the workflow
 * bundle built by `npm run build` (REELFLOW_WORKFLOW_BUNDLE), which spares a cold start of bundling.
 */
export function workerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<WorkerOptions> {
  const activities = positiveInt(env, 'REELFLOW_MAX_CONCURRENT_ACTIVITIES');
  const workflowTasks = positiveInt(env, 'REELFLOW_MAX_CONCURRENT_WORKFLOW_TASKS');
  const cached = positiveInt(env, 'REELFLOW_MAX_CACHED_WORKFLOWS');
  const grace = positiveInt(env, 'REELFLOW_SHUTDOWN_GRACE_SECONDS');
  const bundle = env.REELFLOW_WORKFLOW_BUNDLE;
  return {
    ...(activities !== undefined ? { maxConcurrentActivityTaskExecutions: activities } : {}),
    ...(workflowTasks !== undefined ? { maxConcurrentWorkflowTaskExecutions: workflowTasks } : {}),
    ...(cached !== undefined ? { maxCachedWorkflows: cached } : {}),
    ...(grace !== undefined ? { shutdownGraceTime: `${grace} seconds` } : {}),
    ...(bundle ? { workflowBundle: { codePath: bundle } } : {}),
  };
}

/**
 * Installs the SDK runtime with its Prometheus exporter on `bindAddress` (host:port). Must run before
 * the first connection is made; the SDK's `temporal_*` metrics and the job workflow's own counters appear there.
 */
export function installSdkMetrics(bindAddress: string): void {
  Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress } } } });
}

/** Installs the SDK runtime once: JSON logs through pino, and the Prometheus exporter when asked. */
function installRuntime(sdkMetricsAddress: string | undefined): void {
  Runtime.install({
    logger: createSdkLogger(sdkLogLevel(process.env.REELFLOW_LOG_LEVEL)),
    ...(sdkMetricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: sdkMetricsAddress } } } } : {}),
  });
}

/** Entry point: settings from the environment, graceful shutdown on SIGINT/SIGTERM. */
export async function main(): Promise<void> {
  // The one config module: a missing or wrong variable stops the worker here, named in the message.
  const { temporal: settings, service: serviceSettings } = loadEnvWithService();
  const connect = connectionOptions(settings);
  const tuning = workerOptionsFromEnv();
  // Metrics: reelflow's registry on REELFLOW_METRICS_PORT/metrics, with the SDK exporter's text appended.
  const metricsPort = process.env.REELFLOW_METRICS_PORT ? Number(process.env.REELFLOW_METRICS_PORT) : undefined;
  const sdkAddress = process.env.REELFLOW_SDK_METRICS_ADDRESS || (metricsPort !== undefined ? '127.0.0.1:9464' : undefined);
  installRuntime(sdkAddress);
  let metrics: MetricsServer | undefined;
  if (metricsPort !== undefined) {
    if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) throw new Error('REELFLOW_METRICS_PORT: must be a port number');
    metrics = await startMetricsServer({
      host: process.env.REELFLOW_METRICS_HOST || '127.0.0.1',
      port: metricsPort,
      ...(sdkAddress ? { appendFrom: [`http://${sdkAddress.replace(/^0\.0\.0\.0:/, '127.0.0.1:')}/metrics`] } : {}),
    });
  }
  const connection = await NativeConnection.connect(connect);
  const clientConnection = await Connection.connect(connect);
  const client = new Client({ connection: clientConnection, namespace: settings.namespace });
  const service = createServiceClient({ baseUrl: serviceSettings.url, apiKey: serviceSettings.apiKey, idempotency: serviceSettings.idempotency });
  const { workflowBundle, ...workerTuning } = tuning;
  const worker = await createReelflowWorker({
    connection,
    client,
    taskQueue: settings.taskQueue,
    namespace: settings.namespace,
    service,
    media: mediaFromEnv(serviceSettings.url),
    preflight: { trustedOrigins: [serviceSettings.url] },
    ...(workflowBundle ? { workflowBundle } : {}),
    worker: workerTuning,
  });
  // Worker.create installs SIGINT/SIGTERM handlers that call shutdown(); run() resolves once in-flight
  // tasks are done (or the grace time passes), then the connections close.
  console.log(
    `reelflow worker: task queue ${settings.taskQueue} on ${settings.address} (namespace ${settings.namespace})` +
      `${workflowBundle ? `, workflows from ${process.env.REELFLOW_WORKFLOW_BUNDLE}` : ', workflows bundled at start'}` +
      `${metrics ? `, metrics on ${metrics.url}` : ''}`,
  );
  try {
    await worker.run();
  } finally {
    await metrics?.close();
    await service.close();
    await clientConnection.close();
    await connection.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
