import type { PreflightOptions } from '../activities/preflight';
import type { MediaDeps } from '../activities';
import type { RateGate, ServiceClient } from '../client/types';
import type { Env } from '../config/read';
import type { RouteStore } from '../routing/store';
import { ReelflowPluginOptionsError } from './errors';

/** The options of `reelflowPlugin` and their checks: plain code, loaded with reelflow/worker itself. */

/** The service as settings, when the plugin should build the client itself. */
export interface ServiceConnectionOptions {
  /** The service's base URL, e.g. `https://api.example.com`. */
  url: string;
  /** The account's API key. Never logged. */
  apiKey: string;
  /** Whether the service honours `Idempotency-Key` (docs/submit-policy.md). Default `unknown`: never pays twice. */
  idempotency?: 'honoured' | 'unknown';
  authScheme?: 'Key' | 'Bearer';
  cancelMethod?: 'POST' | 'PUT' | 'DELETE';
}

/** Options of `reelflowPlugin`. Every one is optional: unset ones come from the environment, as `reelflow worker` reads it. */
export interface ReelflowPluginOptions {
  /** The paid service: a client (`createServiceClient` of reelflow/client) or its settings. Default: REELFLOW_SERVICE_URL, REELFLOW_API_KEY, … */
  service?: ServiceClient | ServiceConnectionOptions;
  /**
   * The route store the submit activity subscribes in, which the bridge reads (`openRouteStore`). Default:
   * REELFLOW_ROUTE_STORE, else `<REELFLOW_STATE_DIR>/routes.sqlite` (closed with the worker).
   */
  routeStore?: RouteStore;
  /** The media store (references, archives). Default: REELFLOW_MEDIA_STORE, else `.reelflow/media`. */
  media?: MediaDeps;
  /** Preflight settings; default trusts the service's own origin. */
  preflight?: PreflightOptions;
  /**
   * The account's shared 429 back-off (`AccountLimits`, or any `RateGate`); `false` for none and no caps either.
   * The caps on jobs in flight are the route store's slots: REELFLOW_ACCOUNT_CONCURRENCY and
   * REELFLOW_MODEL_CONCURRENCY (uncapped when unset).
   */
  limits?: RateGate | false;
  /**
   * Also register reelflow's workflow types (pipeline, batch, webhook route) on this worker. Default false:
   * only the activities, which reelflow's step functions in your own workflows need.
   */
  workflows?: boolean;
  /**
   * Worker Versioning (docs/safe-deploys.md): `true` or `{ deploymentName, buildId }` makes the worker a
   * versioned one, pinned by default as `reelflow worker` runs. Unset fields come from
   * REELFLOW_DEPLOYMENT_NAME (default `reelflow`) and REELFLOW_BUILD_ID (default: the package version and
   * a hash of the worker's `workflowBundle`; without a bundle, give `buildId`). Default: unversioned.
   * New executions reach the version once it is current (`setCurrentVersion`).
   */
  versioning?: true | PluginVersioningOptions;
  /**
   * OpenTelemetry tracing (docs/observability.md, "Tracing"): Temporal's activity and workflow interceptors
   * and the workflow span sink on this worker, exported over OTLP/HTTP. Default: on when
   * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, or when the process traces
   * already; `false`: never. Workflow spans need the interceptor module in the worker's bundle: the plugin
   * adds it where the worker bundles its `workflowsPath`.
   */
  tracing?: boolean;
  /** Where unset options are read from. Default: the process environment. */
  env?: Env;
}

/** The Worker Deployment version of a plugin's worker; unset fields come from the environment. */
export interface PluginVersioningOptions {
  /** The Worker Deployment (no `.` or `:`). Default: REELFLOW_DEPLOYMENT_NAME, else `reelflow`. */
  deploymentName?: string;
  /** The build id. Default: REELFLOW_BUILD_ID, else derived from the worker's workflowBundle. */
  buildId?: string;
}

const OPTION_NAMES = [
  'service',
  'routeStore',
  'media',
  'preflight',
  'limits',
  'workflows',
  'versioning',
  'tracing',
  'env',
] as const;
const SERVICE_CLIENT_METHODS = ['submit', 'status', 'result', 'cancel', 'quote'] as const;

function refuse(option: string, reason: string): never {
  throw new ReelflowPluginOptionsError(`reelflowPlugin option "${option}": ${reason}`);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function isServiceClient(value: Record<string, unknown>): boolean {
  return SERVICE_CLIENT_METHODS.every((method) => typeof value[method] === 'function');
}

function checkOneOf(option: string, value: unknown, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value as string))
    refuse(option, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${JSON.stringify(value)}`);
}

function checkVersioning(versioning: unknown): void {
  if (versioning === true) return;
  if (!isObject(versioning)) refuse('versioning', 'must be true or { deploymentName, buildId }');
  for (const key of Object.keys(versioning))
    if (key !== 'deploymentName' && key !== 'buildId')
      refuse(`versioning.${key}`, 'is not an option of versioning (options: deploymentName, buildId)');
  const { deploymentName, buildId } = versioning;
  if (
    deploymentName !== undefined &&
    (typeof deploymentName !== 'string' || !/^[^.:\s][^.:]{0,254}$/.test(deploymentName))
  )
    refuse('versioning.deploymentName', 'must be a non-empty name without `.` or `:` (at most 255 characters)');
  if (buildId !== undefined && (typeof buildId !== 'string' || buildId.trim() === '' || buildId.length > 255))
    refuse('versioning.buildId', 'must be a non-empty string of at most 255 characters');
}

/** Checks the options the caller gave, naming the first bad one. Unset options are read later, from the environment. */
export function checkPluginOptions(options: unknown): ReelflowPluginOptions {
  if (options === undefined) return {};
  if (!isObject(options)) refuse('(options)', 'must be an object');
  for (const key of Object.keys(options))
    if (!(OPTION_NAMES as readonly string[]).includes(key))
      refuse(key, `is not an option of reelflowPlugin (options: ${OPTION_NAMES.join(', ')})`);
  const { service, routeStore, media, preflight, limits, workflows, versioning, env } = options;
  if (workflows !== undefined && typeof workflows !== 'boolean') refuse('workflows', 'must be true or false');
  if (options.tracing !== undefined && typeof options.tracing !== 'boolean') refuse('tracing', 'must be true or false');
  if (service !== undefined) {
    if (!isObject(service)) refuse('service', 'must be a service client or { url, apiKey }');
    if (!isServiceClient(service)) {
      let url: URL | undefined;
      try {
        url = typeof service.url === 'string' ? new URL(service.url) : undefined;
      } catch {
        url = undefined;
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
        refuse('service.url', `must be an http(s) URL, got ${JSON.stringify(service.url)}`);
      if (typeof service.apiKey !== 'string' || service.apiKey === '')
        refuse('service.apiKey', 'must be a non-empty string');
      checkOneOf('service.idempotency', service.idempotency, ['honoured', 'unknown']);
      checkOneOf('service.authScheme', service.authScheme, ['Key', 'Bearer']);
      checkOneOf('service.cancelMethod', service.cancelMethod, ['POST', 'PUT', 'DELETE']);
    }
  }
  if (routeStore !== undefined && !(isObject(routeStore) && typeof routeStore.subscribe === 'function'))
    refuse('routeStore', 'must be a route store (openRouteStore)');
  if (media !== undefined && !(isObject(media) && isObject(media.store)))
    refuse('media', 'must be { store, urlLifetimeSeconds } (a media store)');
  if (preflight !== undefined && !isObject(preflight)) refuse('preflight', 'must be an object');
  // The worker uses only the RateGate half (the service client's rate gate); caps are the route store's slots.
  if (
    limits !== undefined &&
    limits !== false &&
    !(isObject(limits) && typeof limits.wait === 'function' && typeof limits.limited === 'function')
  )
    refuse('limits', 'must be AccountLimits or false (a RateGate: wait and limited)');
  if (env !== undefined && !isObject(env)) refuse('env', 'must be an object of variables');
  if (versioning !== undefined) checkVersioning(versioning);
  return options as ReelflowPluginOptions;
}
