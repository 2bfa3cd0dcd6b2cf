import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker, type WorkerOptions } from '@temporalio/worker';
import pino from 'pino';
import { request } from 'undici';
import { REDACT_PATHS } from '../bridge/app';
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_SIGNAL_TIMEOUT_MS, DEFAULT_WEBHOOK_PATH } from '../config/bridge';
import {
  loadAccountLimits,
  loadMediaSettings,
  loadWorkerDeployment,
  type BridgeConfig,
  type MediaStoreSettings,
} from '../config';
import { startBridgeServer, type RunningBridge } from '../workers/bridge';
import { openRouteStore } from '../routing/open-store';
import type { RouteStore } from '../routing/store';
import { loadRouteStoreSettings } from '../config/route-store';
import { DEFAULT_BACKLOG_LIMIT } from '../config/bridge';
import { createServiceClient } from '../client/service-client';
import { startLocalService, type LocalService, type LocalServiceOptions } from '../workers/local-service';
import { SEARCH_ATTRIBUTE_KEYS, TASK_QUEUES } from '../workflows/definitions';
import { accountLimits, createReelflowWorker, mediaDeps, slotCapsOf } from '../workers/worker';
import { bundleProductionWorkflows } from '../workers/workflow-bundle';
import {
  bundleCodeOf,
  defaultBuildId,
  openExecutionsOn,
  setCurrentVersion,
  versionKey,
} from '../workers/worker-deployment';
import {
  clearRunning,
  ensureAdminKey,
  ensureApiKey,
  processAlive,
  readRunning,
  resolvePorts,
  statePaths,
  writeRunning,
  type RunningStackRecord,
  type StackAddresses,
  type StackPorts,
  type StatePaths,
} from './stack-state';
import {
  isListening,
  startTemporalDevServer,
  type SearchAttributeSpec,
  type TemporalDevServer,
} from './temporal-dev-server';
import { StackSetupError } from './errors';
import { ensureWebhookEndpoint } from './webhook-endpoint';
import { serviceResponseMetrics } from '../metrics/definitions';
import { loadTracingSettings } from '../config/tracing';
import { activeTracing, startTracing, stopTracing, tracingWorkflowModules } from '../tracing';

export type { StackAddresses } from './stack-state';

/** Options of `startLocalStack`. */
export interface LocalStackOptions {
  /** Persistent state (default `.reelflow`). */
  stateDir?: string;
  /** Bind address of every listener (default 127.0.0.1). */
  host?: string;
  /** Explicit ports; otherwise the stored ones, then the defaults (0 = a free port). */
  ports?: Partial<StackPorts>;
  /** Pick free ports on the first start of a state directory (tests, CI). */
  autoPorts?: boolean;
  namespace?: string;
  taskQueue?: string;
  /** Reuse a stack that another process (`reelflow dev`) runs on this state directory. Default true. */
  reuseRunning?: boolean;
  /** Progress lines ("starting the Temporal dev server…"). */
  log?: (line: string) => void;
  /** Render mode of the local service (`stub` is a benchmarking aid; default real ffmpeg renders). */
  render?: LocalServiceOptions['render'];
  /** With `render: 'stub'`: how long each job takes, in ms. */
  stubHoldMs?: number;
  /** Extra options of the in-process worker (tests add activity interceptors). */
  worker?: Partial<WorkerOptions>;
  /** The media store, read at boot by the caller; default REELFLOW_MEDIA_STORE, else `<state dir>/media`. */
  media?: MediaStoreSettings;
  /**
   * The webhook address registered with the service (REELFLOW_WEBHOOK_URL), when something in front of
   * the bridge (TLS) receives the deliveries; default the bridge's own address.
   */
  webhookUrl?: string;
}

/** A local stack: started here, or a running one reused. */
export interface LocalStack extends StackAddresses {
  paths: StatePaths;
  apiKey: string;
  /** True when the API key was created by this start (a fresh state directory). */
  apiKeyCreated: boolean;
  /** True when the webhook endpoint was registered by this start. */
  endpointCreated: boolean;
  /** Set when another process runs the stack and this one only uses it. */
  reusedFrom: RunningStackRecord | null;
  /** True when the Temporal dev server was started by this process (else it was already listening). */
  temporalStartedHere: boolean;
  /** Resolves when the in-process worker stops (never, for a reused stack, until stop()). */
  workerDone: Promise<void>;
  /** Stops what this process started (nothing, for a reused stack). Idempotent. */
  stop(): Promise<void>;
}

const TYPE_NAMES: Record<string, SearchAttributeSpec['type']> = {
  KEYWORD: 'Keyword',
  TEXT: 'Text',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/** reelflow's search attributes in the Temporal CLI's words (`ReelflowStatus=Keyword`, …). */
export function cliSearchAttributes(): SearchAttributeSpec[] {
  return SEARCH_ATTRIBUTE_KEYS.map((key) => {
    const type = TYPE_NAMES[key.type];
    if (!type) throw new Error(`search attribute ${key.name}: no Temporal CLI name for type ${key.type}`);
    return { name: key.name, type };
  });
}

/** The SDK logs every worker start at INFO; the stack's own lines are what a person wants to read. */
function quietTemporalRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
  } catch {
    // Already installed (by an embedding program): keep its settings.
  }
}

async function ok(url: string, apiKey?: string): Promise<boolean> {
  try {
    const response = await request(url, {
      headers: apiKey ? { authorization: `Key ${apiKey}` } : {},
      headersTimeout: 2_000,
      bodyTimeout: 2_000,
    });
    await response.body.dump();
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

/** A listener that cannot bind: name the port and how to pick another one. */
async function listening<T>(what: string, port: number, flag: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new StackSetupError(
        `${what}: port ${port} is already in use by another program; stop it, or choose another port with \`reelflow dev ${flag} <port>\` (stored for this state directory)`,
      );
    }
    throw error;
  }
}

/** The running stack recorded in the state directory, when its process lives and every part answers. */
async function findRunning(paths: StatePaths, apiKey: string): Promise<RunningStackRecord | null> {
  const record = readRunning(paths);
  if (!record || record.pid === process.pid || !processAlive(record.pid)) return null;
  const [host, port] = record.temporalAddress.split(':');
  const healthy =
    (await isListening(host ?? '127.0.0.1', Number(port))) &&
    (await ok(`${record.serviceUrl}/v1/account/balance`, apiKey)) &&
    (await ok(`${new URL(record.bridgeUrl).origin}/healthz`));
  return healthy ? record : null;
}

/**
 * Brings up the whole local stack in this process — Temporal dev server (a child process, with UI and
 * SQLite under the state directory), the local service, the webhook bridge and a worker — or reuses
 * the one a `reelflow dev` already runs on the same state directory (`running.json` + health checks;
 * that process's worker serves the task queue, so nothing is started here).
 *
 * First start of a state directory: an API key is created (stored 0600) and the bridge URL is
 * registered as the service's webhook endpoint, its secret stored (0600). Later starts reuse both,
 * and the same ports, so output URLs and the registration stay valid.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const log = options.log ?? (() => undefined);
  const host = options.host ?? '127.0.0.1';
  const namespace = options.namespace ?? 'default';
  const taskQueue = options.taskQueue ?? TASK_QUEUES.pipelines;
  const paths = statePaths(options.stateDir ?? '.reelflow');
  mkdirSync(paths.logs, { recursive: true });
  const { key: apiKey, created: apiKeyCreated } = ensureApiKey(paths);

  if (options.reuseRunning !== false) {
    const running = await findRunning(paths, apiKey);
    if (running) {
      log(`reusing the stack of \`reelflow dev\` (pid ${running.pid}) on ${paths.root}`);
      return {
        ...running,
        paths,
        apiKey,
        apiKeyCreated,
        endpointCreated: false,
        reusedFrom: running,
        temporalStartedHere: false,
        workerDone: new Promise<void>(() => undefined),
        stop: async () => undefined,
      };
    }
  }

  const ports = await resolvePorts(paths, options.ports ?? {}, options.autoPorts ?? false, host);
  const cleanups: Array<() => Promise<void>> = [];
  const stack: StackStart = { options, log, host, namespace, taskQueue, paths, apiKey, ports, cleanups };
  // Tracing (OTEL_EXPORTER_OTLP_*): the stack's worker and bridge join it; stopped (spans exported) last.
  const tracing = activeTracing() ? undefined : loadTracingSettings('cli');
  if (tracing) {
    startTracing(tracing);
    cleanups.push(() => stopTracing());
  }
  const stopAll = async () => {
    while (cleanups.length > 0) {
      const cleanup = cleanups.pop();
      await cleanup?.().catch(() => undefined);
    }
  };
  try {
    log(`Temporal dev server on ${host}:${ports.temporal} (UI ${ports.temporalUi})…`);
    const temporal: TemporalDevServer = await startTemporalDevServer({
      dbFile: paths.temporalDb,
      logFile: join(paths.logs, 'temporal.log'),
      host,
      port: ports.temporal,
      uiPort: ports.temporalUi,
      namespace,
      searchAttributes: cliSearchAttributes(),
    });
    cleanups.push(() => temporal.stop());
    if (temporal.adoptedPid !== undefined)
      log(
        `adopted the Temporal dev server (pid ${temporal.adoptedPid}) an earlier start left running on ${temporal.address}; it stops when this stack stops`,
      );
    else if (!temporal.startedHere)
      log(`a Temporal server already listens on ${temporal.address}; using it (it is not stopped with this stack)`);

    log(`local service on ${host}:${ports.service}…`);
    const service: LocalService = await listening('local service', ports.service, '--service-port', () =>
      startLocalService({
        host,
        port: ports.service,
        dataDir: paths.serviceData,
        apiKeys: [apiKey],
        // The stack is for local use: fault injection and credit grants are on, behind their own credential.
        adminKey: ensureAdminKey(paths).key,
        allowPrivateWebhooks: true,
        logger: false,
        ...(options.render ? { render: options.render } : {}),
        ...(options.stubHoldMs !== undefined ? { stubHoldMs: options.stubHoldMs } : {}),
      }),
    );
    cleanups.push(() => service.close());

    const { bridge, routeStore, endpointCreated } = await startStackBridge(stack, temporal.address, service.url);
    const { workerDone } = await startStackWorker(stack, temporal.address, service.url, routeStore);
    const addresses: StackAddresses = {
      temporalAddress: temporal.address,
      temporalUiUrl: temporal.uiUrl,
      namespace,
      serviceUrl: service.url,
      bridgeUrl: bridge.url,
      taskQueue,
    };
    writeRunning(paths, { pid: process.pid, startedAt: new Date().toISOString(), ...addresses });
    cleanups.unshift(async () => clearRunning(paths));

    let stopping: Promise<void> | null = null;
    return {
      ...addresses,
      paths,
      apiKey,
      apiKeyCreated,
      endpointCreated,
      reusedFrom: null,
      temporalStartedHere: temporal.startedHere,
      workerDone,
      stop: () => (stopping ??= stopAll()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** What the parts of a starting stack share: its settings, and the cleanups that stop what started (last first). */
interface StackStart {
  options: LocalStackOptions;
  log: (line: string) => void;
  host: string;
  namespace: string;
  taskQueue: string;
  paths: StatePaths;
  apiKey: string;
  ports: StackPorts;
  cleanups: Array<() => Promise<void>>;
}

/** The webhook bridge, registered with the local service, over the route store it shares with the worker. */
async function startStackBridge(
  { options, log, host, namespace, paths, apiKey, ports, cleanups }: StackStart,
  temporalAddress: string,
  serviceUrl: string,
): Promise<{ bridge: RunningBridge; routeStore: RouteStore; endpointCreated: boolean }> {
  const bridgeUrl = `http://${host}:${ports.bridge}${DEFAULT_WEBHOOK_PATH}`;
  const { endpoint, created: endpointCreated } = await ensureWebhookEndpoint(
    paths,
    serviceUrl,
    apiKey,
    options.webhookUrl ?? bridgeUrl,
  );
  log(`webhook bridge on ${bridgeUrl}…`);
  // The route store: REELFLOW_ROUTE_STORE, else <state dir>/routes.sqlite; the bridge and the worker share it.
  const routeSettings = loadRouteStoreSettings(undefined, { stateDir: paths.root });
  const routeStore = openRouteStore(routeSettings.location);
  cleanups.push(() => routeStore.close());
  const bridgeConfig: BridgeConfig = {
    secrets: [endpoint.secret],
    temporal: { address: temporalAddress, namespace },
    host,
    port: ports.bridge,
    path: DEFAULT_WEBHOOK_PATH,
    bodyLimit: DEFAULT_BODY_LIMIT_BYTES,
    signalTimeoutMs: DEFAULT_SIGNAL_TIMEOUT_MS,
    backlogLimit: DEFAULT_BACKLOG_LIMIT,
    routeStore: routeSettings,
    // The local service honours Idempotency-Key: the bridge submits the steps pipelines prepared.
    service: { url: serviceUrl, apiKey, idempotency: 'honoured', authScheme: 'Key', cancelMethod: 'POST' },
    logLevel: 'warn',
  };
  // The bridge logs to a file: the terminal is for the stack's own lines.
  const bridgeLogger = pino(
    { level: 'warn', redact: REDACT_PATHS },
    pino.destination({ dest: join(paths.logs, 'bridge.log'), sync: true, mkdir: true }),
  );
  const bridge: RunningBridge = await listening('webhook bridge', ports.bridge, '--bridge-port', () =>
    startBridgeServer(bridgeConfig, { logger: bridgeLogger, store: routeStore }),
  );
  cleanups.push(() => bridge.close());
  return { bridge, routeStore, endpointCreated };
}

/** The worker, made the current version at once; `workerDone` is its run. */
async function startStackWorker(
  { options, log, namespace, taskQueue, paths, apiKey, cleanups }: StackStart,
  temporalAddress: string,
  serviceUrl: string,
  routeStore: RouteStore,
): Promise<{ workerDone: Promise<void> }> {
  log(`worker on task queue ${taskQueue} (bundling workflows)…`);
  quietTemporalRuntime();
  const nativeConnection = await NativeConnection.connect({ address: temporalAddress });
  cleanups.push(() => nativeConnection.close());
  const connection = await Connection.connect({ address: temporalAddress });
  cleanups.push(() => connection.close());
  const client = new Client({ connection, namespace });
  // The local service honours Idempotency-Key (docs/submit-policy.md), so a lost answer is retried with the same key.
  // The account's limits: the shared 429 back-off in <state dir>/account by default, and the caps
  // (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY) as slots in the route store.
  const accountSettings = loadAccountLimits(undefined, { stateDir: paths.root });
  const limits = accountLimits(accountSettings, () => serviceClient);
  cleanups.push(async () => limits.close());
  const serviceClient = createServiceClient({
    baseUrl: serviceUrl,
    apiKey,
    idempotency: 'honoured',
    rateGate: limits,
    onResponse: serviceResponseMetrics(),
  });
  cleanups.push(() => serviceClient.close());
  // The media store: REELFLOW_MEDIA_STORE, else <state dir>/media (where `reelflow run` puts local files).
  const media = mediaDeps(serviceUrl, options.media ?? loadMediaSettings(undefined, { stateDir: paths.root }));
  const workflowBundle =
    options.worker?.workflowBundle ??
    (await bundleProductionWorkflows(undefined, { workflowInterceptorModules: tracingWorkflowModules() }));
  const deploymentSettings = loadWorkerDeployment();
  const version = {
    deploymentName: deploymentSettings.deploymentName,
    buildId: deploymentSettings.buildId ?? defaultBuildId(bundleCodeOf(workflowBundle)),
  };
  const worker: Worker = await createReelflowWorker({
    connection: nativeConnection,
    client,
    taskQueue,
    namespace,
    service: serviceClient,
    media,
    preflight: { trustedOrigins: [serviceUrl] },
    workflowBundle,
    deployment: version,
    limits,
    slotCaps: slotCapsOf(accountSettings),
    routeStore,
    ...(options.worker ? { worker: options.worker } : {}),
  });
  const workerDone = worker.run();
  // The dev stack's worker is the current version at once. Executions of earlier dev runs stay on
  // the version they started on (pinned); unversioned ones (a 0.1.0 stack's) move to this one.
  const unversioned = await openExecutionsOn(client, 'unversioned', taskQueue);
  if (unversioned > 0)
    log(`${unversioned} open executions of unversioned (0.1.0) workers move to this version (docs/safe-deploys.md)`);
  await setCurrentVersion(client, version);
  log(`worker version ${versionKey(version)} is current`);
  cleanups.push(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await workerDone.catch(() => undefined);
  });
  return { workerDone };
}
