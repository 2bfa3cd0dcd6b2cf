import { resolve } from 'node:path';
import { loadMediaSettings, type MediaStoreSettings } from './media';
import { loadRouteStoreSettings, type RouteStoreSettings } from './route-store';
import { readVariables, type Env } from './read';
import type { LogLevelName } from './schemas';
import { loadServiceSettings, type ServiceSettings } from './service-client';
import { loadTemporalSettings, type TemporalSettings } from './temporal';
import { loadTracingSettings, type TracingSettings } from './tracing';

/** Production tuning of the worker; unset ones keep the SDK's defaults. */
export interface WorkerTuning {
  maxConcurrentActivities?: number;
  maxConcurrentWorkflowTasks?: number;
  maxCachedWorkflows?: number;
  shutdownGraceSeconds?: number;
  /** REELFLOW_WORKFLOW_BUNDLE: the bundle `npm run build` writes; unset = bundle at start. */
  workflowBundle?: string;
}

/** The worker's Worker Versioning settings (docs/safe-deploys.md). */
export interface WorkerDeploymentSettings {
  deploymentName: string;
  /** REELFLOW_BUILD_ID; unset = derived from the package version and the workflow bundle. */
  buildId?: string;
  /** REELFLOW_SET_CURRENT_VERSION: make this version current once nothing unversioned is open. */
  setCurrent: boolean;
}

/** Reads the worker's Worker Versioning variables. */
export function loadWorkerDeployment(env: Env = process.env): WorkerDeploymentSettings {
  const e = readVariables(['REELFLOW_DEPLOYMENT_NAME', 'REELFLOW_BUILD_ID', 'REELFLOW_SET_CURRENT_VERSION'], env);
  return {
    deploymentName: e.REELFLOW_DEPLOYMENT_NAME,
    ...(e.REELFLOW_BUILD_ID !== undefined ? { buildId: e.REELFLOW_BUILD_ID } : {}),
    setCurrent: e.REELFLOW_SET_CURRENT_VERSION,
  };
}

/** The worker process's configuration (variables: WORKER_VARIABLES in ./processes.ts). */
export interface WorkerConfig {
  temporal: TemporalSettings;
  service: ServiceSettings;
  media: MediaStoreSettings;
  logLevel: LogLevelName;
  tuning: WorkerTuning;
  deployment: WorkerDeploymentSettings;
  /** Prometheus `/metrics` (REELFLOW_METRICS_*): absent when REELFLOW_METRICS_PORT is unset. */
  metrics?: { port: number; host: string };
  /** The health endpoint (REELFLOW_WORKER_HEALTH_*): absent when REELFLOW_WORKER_HEALTH_PORT is unset. */
  health?: { port: number; host: string };
  /** The account's limits (REELFLOW_ACCOUNT_*): the shared directory and the cap on jobs in flight (absent: none). */
  account: AccountLimitSettings;
  /** Where the SDK's own exporter listens (REELFLOW_SDK_METRICS_ADDRESS; default 127.0.0.1:9464 with metrics on). */
  sdkMetricsAddress?: string;
  /** The route store the submit activity subscribes in (REELFLOW_ROUTE_STORE; the bridge's must be the same). */
  routeStore: RouteStoreSettings;
  /** Tracing (OTEL_EXPORTER_OTLP_*): absent when no endpoint is set. */
  tracing?: TracingSettings;
}

/**
 * The account's limits as the worker applies them: the caps of the slots in the route store
 * (src/routing/account-slots.ts) and the directory of the shared 429 back-off (src/client/account-limits.ts).
 */
export interface AccountLimitSettings {
  dir: string;
  /** Jobs in flight for the whole account (REELFLOW_ACCOUNT_CONCURRENCY); absent: no cap. */
  concurrency?: number;
  /** Jobs in flight per model (REELFLOW_MODEL_CONCURRENCY); empty: none. */
  models: Record<string, number>;
}

/** The caps the account's slots count against (the route store's SlotCaps: an account cap, caps per model). */
export interface SlotCapSettings {
  account?: number;
  models: Record<string, number>;
}

/**
 * The slot caps of REELFLOW_ACCOUNT_CONCURRENCY and REELFLOW_MODEL_CONCURRENCY as `settings` read them;
 * undefined when neither is set (no job takes a slot). The worker, the bridge and `reelflow status` read them so.
 */
export function slotCapsOf(
  settings: Pick<AccountLimitSettings, 'concurrency' | 'models'>,
): SlotCapSettings | undefined {
  if (settings.concurrency === undefined && Object.keys(settings.models).length === 0) return undefined;
  return {
    ...(settings.concurrency !== undefined ? { account: settings.concurrency } : {}),
    models: settings.models,
  };
}

/** The variables of the account's limits. */
export const ACCOUNT_VARIABLE_NAMES = [
  'REELFLOW_ACCOUNT_CONCURRENCY',
  'REELFLOW_MODEL_CONCURRENCY',
  'REELFLOW_ACCOUNT_LIMITS_DIR',
] as const;

/**
 * Reads REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY and REELFLOW_ACCOUNT_LIMITS_DIR
 * (default `<state dir>/account`; `stateDir` stands for REELFLOW_STATE_DIR, as the local stack passes its own).
 */
export function loadAccountLimits(env: Env = process.env, options: { stateDir?: string } = {}): AccountLimitSettings {
  const e = readVariables([...ACCOUNT_VARIABLE_NAMES, 'REELFLOW_STATE_DIR'], env);
  return {
    dir: resolve(
      e.REELFLOW_ACCOUNT_LIMITS_DIR ?? resolve(options.stateDir ?? e.REELFLOW_STATE_DIR ?? '.reelflow', 'account'),
    ),
    ...(e.REELFLOW_ACCOUNT_CONCURRENCY !== undefined ? { concurrency: e.REELFLOW_ACCOUNT_CONCURRENCY } : {}),
    models: e.REELFLOW_MODEL_CONCURRENCY ?? {},
  };
}

/** Reads the worker's tuning variables. */
export function loadWorkerTuning(env: Env = process.env): WorkerTuning {
  const e = readVariables(
    [
      'REELFLOW_MAX_CONCURRENT_ACTIVITIES',
      'REELFLOW_MAX_CONCURRENT_WORKFLOW_TASKS',
      'REELFLOW_MAX_CACHED_WORKFLOWS',
      'REELFLOW_SHUTDOWN_GRACE_SECONDS',
      'REELFLOW_WORKFLOW_BUNDLE',
    ],
    env,
  );
  return {
    ...(e.REELFLOW_MAX_CONCURRENT_ACTIVITIES !== undefined
      ? { maxConcurrentActivities: e.REELFLOW_MAX_CONCURRENT_ACTIVITIES }
      : {}),
    ...(e.REELFLOW_MAX_CONCURRENT_WORKFLOW_TASKS !== undefined
      ? { maxConcurrentWorkflowTasks: e.REELFLOW_MAX_CONCURRENT_WORKFLOW_TASKS }
      : {}),
    ...(e.REELFLOW_MAX_CACHED_WORKFLOWS !== undefined ? { maxCachedWorkflows: e.REELFLOW_MAX_CACHED_WORKFLOWS } : {}),
    ...(e.REELFLOW_SHUTDOWN_GRACE_SECONDS !== undefined
      ? { shutdownGraceSeconds: e.REELFLOW_SHUTDOWN_GRACE_SECONDS }
      : {}),
    ...(e.REELFLOW_WORKFLOW_BUNDLE !== undefined ? { workflowBundle: e.REELFLOW_WORKFLOW_BUNDLE } : {}),
  };
}

/** Reads and validates everything the worker needs at boot; throws ConfigError naming the variable. */
export function loadWorkerConfig(env: Env = process.env): WorkerConfig {
  const temporal = loadTemporalSettings(env);
  const service = loadServiceSettings(env, true);
  const media = loadMediaSettings(env);
  const tuning = loadWorkerTuning(env);
  const account = loadAccountLimits(env);
  const e = readVariables(
    [
      'REELFLOW_LOG_LEVEL',
      'REELFLOW_METRICS_PORT',
      'REELFLOW_METRICS_HOST',
      'REELFLOW_SDK_METRICS_ADDRESS',
      'REELFLOW_WORKER_HEALTH_PORT',
      'REELFLOW_WORKER_HEALTH_HOST',
    ],
    env,
  );
  const tracing = loadTracingSettings('worker', env);
  const sdkMetricsAddress =
    e.REELFLOW_SDK_METRICS_ADDRESS ?? (e.REELFLOW_METRICS_PORT !== undefined ? '127.0.0.1:9464' : undefined);
  return {
    temporal,
    service,
    media,
    logLevel: e.REELFLOW_LOG_LEVEL,
    tuning,
    deployment: loadWorkerDeployment(env),
    account,
    routeStore: loadRouteStoreSettings(env),
    ...(e.REELFLOW_METRICS_PORT !== undefined
      ? { metrics: { port: e.REELFLOW_METRICS_PORT, host: e.REELFLOW_METRICS_HOST } }
      : {}),
    ...(sdkMetricsAddress !== undefined ? { sdkMetricsAddress } : {}),
    ...(e.REELFLOW_WORKER_HEALTH_PORT !== undefined
      ? { health: { port: e.REELFLOW_WORKER_HEALTH_PORT, host: e.REELFLOW_WORKER_HEALTH_HOST } }
      : {}),
    ...(tracing ? { tracing } : {}),
  };
}

/** What `reelflowPlugin()` reads when given no options: the same service, media and account settings as `reelflow worker`. */
export interface PluginSettings {
  service: ServiceSettings;
  media: MediaStoreSettings;
  account: AccountLimitSettings;
}

/** Reads the plugin's settings (a subset of the worker's: Temporal's are the host worker's own); throws ConfigError naming the variable. */
export function loadPluginSettings(env: Env = process.env): PluginSettings {
  return { service: loadServiceSettings(env, true), media: loadMediaSettings(env), account: loadAccountLimits(env) };
}
