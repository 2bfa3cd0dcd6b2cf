import { Client, Connection } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { startMetricsServer, type MetricsServer } from '../metrics/server';
import { serviceResponseMetrics } from '../metrics/definitions';
import { slotMetrics } from '../metrics/slots';
import { createActivities, type ActivityDeps, type MediaDeps } from '../activities';
import { mergeActivities, prefixedActivities } from '../plugin/activity-types';
import { openMediaStore } from '../media/store';
import type { PreflightOptions } from '../activities/preflight';
import { createRouteSubscriber } from '../routing/subscriber';
import { openRouteStore } from '../routing/open-store';
import type { RouteStore } from '../routing/store';
import { loadRouteStoreSettings } from '../config/route-store';
import { describeRouteStoreLocation } from '../config/route-store-location';
import { createServiceClient } from '../client/service-client';
import { AccountLimits } from '../client/account-limits';
import { AccountSlots } from '../routing/account-slots';
import { temporalSlotSignaller } from '../routing/slot-signaller';
import type { SlotCaps } from '../routing/slot-store';
import type { CallKind, ServiceClient } from '../client/types';
import {
  ConfigError,
  CONFIG_EXIT_CODE,
  connectionOptions,
  describeTemporalConnection,
  describeTracing,
  loadMediaSettings,
  loadWorkerConfig,
  type AccountLimitSettings,
  loadWorkerTuning,
  slotCapsOf,
  type Env,
  type MediaStoreSettings,
  type WorkerTuning,
} from '../config';
import { createSdkLogger, sdkLogLevel } from './logging';
import { startWorkerHealthServer, type WorkerHealthServer } from './worker-health';
import { bundleProductionWorkflows } from './workflow-bundle';
import {
  activeTracing,
  bundleHasTracing,
  startTracing,
  stopTracing,
  tracingClientInterceptors,
  tracingWorkflowModules,
  withTracing,
} from '../tracing';
import {
  bundleCodeOf,
  currentVersion,
  defaultBuildId,
  setCurrentWhenDrained,
  versionedWorkerOptions,
  versionKey,
} from './worker-deployment';

/** Options of a reelflow worker built in-process (tests, the local stack) or by the entry point. */
export interface ReelflowWorkerOptions {
  /** Worker-side connection to Temporal. */
  connection: NativeConnection;
  /** Client of this worker's Temporal namespace. */
  client: Client;
  taskQueue: string;
  namespace?: string;
  service: ServiceClient;
  /** A prebuilt bundle (tests bundle once per file); otherwise the workflows are bundled from source at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  onCall?: (kind: CallKind) => void;
  /**
   * Extra worker options (concurrency limits, shutdown grace, ...). Its `activities` are registered next
   * to reelflow's; one under a `reelflow.` type is refused (ReelflowPluginOptionsError) rather than replacing reelflow's.
   */
  worker?: Partial<WorkerOptions>;
  /** The media store; default: the one the environment configures (REELFLOW_MEDIA_STORE). */
  media?: MediaDeps;
  /** Settings of the preflight activity; `trustedOrigins` should name the service's own origin. */
  preflight?: PreflightOptions;
  /**
   * Worker Versioning: the version this worker runs (docs/safe-deploys.md). Pipelines it starts stay
   * pinned to it. Unset: an unversioned worker (how 0.1.0 ran), which takes executions only while
   * its deployment has no current version.
   */
  deployment?: WorkerDeploymentVersion;
  /** The account's shared 429 back-off (accountLimits()); pass the same to the service client as its `rateGate`. */
  limits?: AccountLimits;
  /**
   * Caps on jobs in flight (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY: slotCapsOf()),
   * counted in the route store's slots; absent or empty: no cap.
   */
  slotCaps?: SlotCaps;
  /**
   * The route store the submit activity subscribes in (the bridge's must be the same); default the one
   * REELFLOW_ROUTE_STORE names. The caller closes a store it passes.
   */
  routeStore?: RouteStore;
  /** Replaces the subscription altogether (tests of pipelines pinned to builds that routed through route workflows). */
  routes?: ActivityDeps['routes'];
}

/**
 * The account's shared 429 back-off of `settings` (REELFLOW_ACCOUNT_LIMITS_DIR). Caps on jobs in flight
 * are the route store's slots (slotCapsOf()), so it holds no permits.
 * @param _service Unused: 0.3.0's permit reaper asked it; still taken so earlier callers compile.
 */
export function accountLimits(settings: AccountLimitSettings, _service?: () => ServiceClient): AccountLimits {
  return new AccountLimits({ dir: settings.dir });
}

/** The caps as the worker's start line names them (empty when none). */
function describeCaps(caps: SlotCaps | undefined): string {
  if (!caps) return '';
  const parts = [
    ...(caps.account !== undefined ? [`${caps.account} for the account`] : []),
    ...Object.entries(caps.models).map(([model, cap]) => `${cap} of ${model}`),
  ];
  return parts.length ? `, at most ${parts.join(', ')} in flight (slots in the route store)` : '';
}

/** The slot caps of the account's settings (src/config/worker.ts), undefined when none is set. */
export { slotCapsOf };

/** How often each worker's slot reaper sweeps (a leaked slot is freed within 30 s of its grant plus this). */
export const SLOT_REAPER_EVERY_MS = 10_000;

/**
 * The account's slots on `store` under `caps`, granted to waiting runs through `client`, with its
 * reaper sweeping until `stopped()` says the worker ended; undefined when nothing is capped.
 */
function accountSlots(
  store: RouteStore | undefined,
  caps: SlotCaps | undefined,
  clients: { temporal: Client; service: ServiceClient },
  stopped: () => boolean,
): AccountSlots | undefined {
  if (!store || !caps) return undefined;
  const metrics = slotMetrics({ snapshot: () => store.slots.snapshot(), caps });
  const slots = new AccountSlots({
    store: store.slots,
    caps,
    signaller: () => temporalSlotSignaller(clients.temporal),
    service: clients.service,
    onGrant: (grant) => metrics.granted(grant.fairnessKey ?? ''),
    onProblem: (message, details) => Runtime.instance().logger.warn(message, details),
  });
  const stop = slots.startReaper(SLOT_REAPER_EVERY_MS, () => {
    if (stopped()) stop();
  });
  return slots;
}

/** The media store of `settings` (default: the one the environment configures), for a worker talking to `serviceUrl`. */
export function mediaDeps(serviceUrl?: string, settings: MediaStoreSettings = loadMediaSettings()): MediaDeps {
  return { ...openMediaStore(settings), ...(serviceUrl ? { serviceOrigin: serviceUrl } : {}) };
}

/** The media store the environment (`env`, default the process's) configures, for a worker talking to `serviceUrl`. */
export function mediaFromEnv(serviceUrl?: string, env?: Env): MediaDeps {
  return mediaDeps(serviceUrl, loadMediaSettings(env));
}

/** Creates the worker that runs every reelflow workflow and activity on `taskQueue`. */
export async function createReelflowWorker(options: ReelflowWorkerOptions): Promise<Worker> {
  const routeStore = options.routes
    ? options.routeStore
    : (options.routeStore ?? openRouteStore(loadRouteStoreSettings().location));
  const late: { worker?: Worker } = {};
  const slots = accountSlots(
    routeStore,
    options.slotCaps,
    { temporal: options.client, service: options.service },
    () => late.worker?.getState() === 'STOPPED',
  );
  const activities = createActivities({
    client: options.service,
    routes: options.routes ?? createRouteSubscriber(routeStore as RouteStore),
    ...(options.onCall ? { onCall: options.onCall } : {}),
    media: options.media ?? mediaDeps(),
    ...(options.preflight ? { preflight: options.preflight } : {}),
    ...(slots ? { slots } : {}),
  });
  // With the process's tracing on, its interceptors and workflow span sink join the caller's options.
  late.worker = await Worker.create(
    withTracing({
      connection: options.connection,
      namespace: options.namespace ?? options.client.options.namespace,
      taskQueue: options.taskQueue,
      // Without a prebuilt bundle, bundle here the way the build does (production mode, no source map).
      workflowBundle: options.workflowBundle ?? (await bundleTracedWorkflows()),
      shutdownGraceTime: '10 seconds',
      ...(options.deployment ? versionedWorkerOptions(options.deployment) : {}),
      ...options.worker,
      // The caller's own activities join reelflow's (under their `reelflow.` types); they never replace them.
      activities: mergeActivities(options.worker?.activities, prefixedActivities(activities), 'worker.activities'),
    }),
  );
  return late.worker;
}

/** reelflow's workflows bundled as the build does, with Temporal's workflow interceptors when the process traces. */
function bundleTracedWorkflows(): ReturnType<typeof bundleProductionWorkflows> {
  return bundleProductionWorkflows(undefined, { workflowInterceptorModules: tracingWorkflowModules() });
}

/**
 * The worker process's bundle: the prebuilt one (REELFLOW_WORKFLOW_BUNDLE), unless the process traces and
 * it was built without Temporal's workflow interceptors: workflows would then pass no trace context to
 * their activities, so they are bundled at start with them (another build id, as any change of code).
 */
async function workerBundle(
  built: WorkerOptions['workflowBundle'],
): Promise<NonNullable<WorkerOptions['workflowBundle']>> {
  if (built && !(activeTracing() && !bundleHasTracing(bundleCodeOf(built)))) return built;
  if (built)
    console.log('reelflow worker: REELFLOW_WORKFLOW_BUNDLE was built without tracing: bundling the workflows at start');
  return bundleTracedWorkflows();
}

/** The worker options of the tuning variables (src/config/worker.ts). */
export function workerOptionsFrom(tuning: WorkerTuning): Partial<WorkerOptions> {
  return {
    ...(tuning.maxConcurrentActivities !== undefined
      ? { maxConcurrentActivityTaskExecutions: tuning.maxConcurrentActivities }
      : {}),
    ...(tuning.maxConcurrentWorkflowTasks !== undefined
      ? { maxConcurrentWorkflowTaskExecutions: tuning.maxConcurrentWorkflowTasks }
      : {}),
    ...(tuning.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: tuning.maxCachedWorkflows } : {}),
    ...(tuning.shutdownGraceSeconds !== undefined
      ? { shutdownGraceTime: `${tuning.shutdownGraceSeconds} seconds` }
      : {}),
    ...(tuning.workflowBundle ? { workflowBundle: { codePath: tuning.workflowBundle } } : {}),
  };
}

/**
 * Production tuning from the environment: concurrency, sticky cache, shutdown grace and the workflow
 * bundle built by `npm run build` (REELFLOW_WORKFLOW_BUNDLE), which spares a cold start of bundling.
 */
export function workerOptionsFromEnv(env?: Env): Partial<WorkerOptions> {
  return workerOptionsFrom(loadWorkerTuning(env));
}

/** Installs the SDK runtime once: JSON logs through pino, and the Prometheus exporter when asked. */
function installRuntime(logLevel: string, sdkMetricsAddress: string | undefined): void {
  Runtime.install({
    logger: createSdkLogger(sdkLogLevel(logLevel)),
    ...(sdkMetricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: sdkMetricsAddress } } } } : {}),
  });
}

/** Entry point: settings from the environment, graceful shutdown on SIGINT/SIGTERM. */
export async function main(): Promise<void> {
  // src/config: a missing or wrong variable stops the worker here, named in the message (exit 2).
  const config = loadWorkerConfig();
  const { temporal: settings, service: serviceSettings } = config;
  const connect = connectionOptions(settings);
  const tuning = workerOptionsFrom(config.tuning);
  // Tracing (OTEL_EXPORTER_OTLP_*): started before the first client, so its start and signals carry context.
  if (config.tracing) startTracing(config.tracing);
  // Metrics: reelflow's registry on REELFLOW_METRICS_PORT/metrics, with the SDK exporter's text appended.
  const sdkAddress = config.sdkMetricsAddress;
  installRuntime(config.logLevel, sdkAddress);
  let metrics: MetricsServer | undefined;
  if (config.metrics) {
    metrics = await startMetricsServer({
      host: config.metrics.host,
      port: config.metrics.port,
      ...(sdkAddress ? { appendFrom: [`http://${sdkAddress.replace(/^0\.0\.0\.0:/, '127.0.0.1:')}/metrics`] } : {}),
    });
  }
  const connection = await NativeConnection.connect(connect);
  const clientConnection = await Connection.connect(connect);
  const client = new Client({
    connection: clientConnection,
    namespace: settings.namespace,
    interceptors: tracingClientInterceptors(),
  });
  const limits = accountLimits(config.account);
  const service = createServiceClient({
    baseUrl: serviceSettings.url,
    apiKey: serviceSettings.apiKey,
    idempotency: serviceSettings.idempotency,
    rateGate: limits,
    authScheme: serviceSettings.authScheme,
    cancelMethod: serviceSettings.cancelMethod,
    onResponse: serviceResponseMetrics(),
  });
  const { workflowBundle: builtBundle, ...workerTuning } = tuning;
  // The default build id is the workflow code's hash, so the bundle is read (or made) first.
  const workflowBundle = await workerBundle(builtBundle);
  const version = {
    deploymentName: config.deployment.deploymentName,
    buildId: config.deployment.buildId ?? defaultBuildId(bundleCodeOf(workflowBundle)),
  };
  const routeStore = openRouteStore(config.routeStore.location);
  const worker = await createReelflowWorker({
    connection,
    client,
    taskQueue: settings.taskQueue,
    namespace: settings.namespace,
    service,
    media: mediaDeps(serviceSettings.url, config.media),
    preflight: { trustedOrigins: [serviceSettings.url] },
    workflowBundle,
    deployment: version,
    limits,
    slotCaps: slotCapsOf(config.account),
    routeStore,
    worker: workerTuning,
  });
  // Readiness on its own port (metrics on or not): the frontend answering and both pollers polling.
  let health: WorkerHealthServer | undefined;
  if (config.health) {
    health = await startWorkerHealthServer({
      ...config.health,
      worker,
      connection: clientConnection,
      address: settings.address,
      namespace: settings.namespace,
      taskQueue: settings.taskQueue,
    });
  }
  // Worker.create installs SIGINT/SIGTERM handlers that call shutdown(); run() resolves once in-flight
  // tasks are done (or the grace time passes), then the connections close.
  console.log(
    `reelflow worker: task queue ${settings.taskQueue} on ${describeTemporalConnection(settings)}` +
      `${config.tuning.workflowBundle ? `, workflows from ${config.tuning.workflowBundle}` : ', workflows bundled at start'}` +
      `, worker version ${versionKey(version)}` +
      `, route store ${describeRouteStoreLocation(config.routeStore.location)}` +
      `${metrics ? `, metrics on ${metrics.url}` : ''}` +
      `${describeCaps(slotCapsOf(config.account))}` +
      `${health ? `, readiness on ${health.url}/readyz` : ''}` +
      `, tracing ${describeTracing(config.tracing)}`,
  );
  const running = worker.run();
  const stopWaiting = new AbortController();
  // Asked to (REELFLOW_SET_CURRENT_VERSION), or the deployment's first version: nothing else is current.
  if (config.deployment.setCurrent || (await currentVersion(client, version.deploymentName)) === null) {
    setCurrentWhenDrained(client, version, settings.taskQueue, {
      signal: stopWaiting.signal,
      log: (line) => console.log(`reelflow worker: ${line}`),
    }).then(
      (made) => made && console.log(`reelflow worker: ${versionKey(version)} is the current version`),
      (error: unknown) =>
        console.error(`reelflow worker: could not make ${versionKey(version)} current: ${(error as Error).message}`),
    );
  }
  try {
    await running;
  } finally {
    stopWaiting.abort();
    await health?.close();
    await metrics?.close();
    limits.close();
    await routeStore.close();
    await service.close();
    await clientConnection.close();
    await connection.close();
    await stopTracing();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`reelflow worker: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(error instanceof ConfigError ? CONFIG_EXIT_CODE : 1);
  });
}
