import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Worker, WorkerOptions, WorkerPlugin } from '@temporalio/worker';
import { createActivities, type MediaDeps } from '../activities';
import type { PreflightOptions } from '../activities/preflight';
import { createRouteSubscriber } from '../routing/subscriber';
import { openRouteStore } from '../routing/open-store';
import type { RouteStore } from '../routing/store';
import { loadRouteStoreSettings } from '../config/route-store';
import type { AccountLimits } from '../client/account-limits';
import { createServiceClient } from '../client/service-client';
import type { ServiceClient } from '../client/types';
import { loadPluginSettings, type Env } from '../config';
import { accountLimits, mediaDeps } from '../workers/worker';
import { mergeActivities, prefixedActivities } from './activity-types';
import { ReelflowPluginOptionsError } from './errors';

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
   * REELFLOW_ROUTE_STORE, else `.reelflow/routes.sqlite` (closed with the worker).
   */
  routeStore?: RouteStore;
  /** The media store (references, archives). Default: REELFLOW_MEDIA_STORE, else `.reelflow/media`. */
  media?: MediaDeps;
  /** Preflight settings; default trusts the service's own origin. */
  preflight?: PreflightOptions;
  /** The account's cap on jobs in flight; `false` for none. Default: REELFLOW_ACCOUNT_CONCURRENCY (uncapped when unset). */
  limits?: AccountLimits | false;
  /**
   * Also register reelflow's workflow types (pipeline, batch, webhook route) on this worker. Default false:
   * only the activities, which reelflow's step functions in your own workflows need.
   */
  workflows?: boolean;
  /** Where unset options are read from. Default: the process environment. */
  env?: Env;
}

const OPTION_NAMES = ['service', 'routeStore', 'media', 'preflight', 'limits', 'workflows', 'env'] as const;
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

/** Checks the options the caller gave, naming the first bad one. Unset options are read later, from the environment. */
export function checkPluginOptions(options: unknown): ReelflowPluginOptions {
  if (options === undefined) return {};
  if (!isObject(options)) refuse('(options)', 'must be an object');
  for (const key of Object.keys(options))
    if (!(OPTION_NAMES as readonly string[]).includes(key))
      refuse(key, `is not an option of reelflowPlugin (options: ${OPTION_NAMES.join(', ')})`);
  const { service, routeStore, media, preflight, limits, workflows, env } = options;
  if (workflows !== undefined && typeof workflows !== 'boolean') refuse('workflows', 'must be true or false');
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
  if (limits !== undefined && limits !== false && !(isObject(limits) && typeof limits.acquire === 'function'))
    refuse('limits', 'must be AccountLimits or false');
  if (env !== undefined && !isObject(env)) refuse('env', 'must be an object of variables');
  return options as ReelflowPluginOptions;
}

/** reelflow's own workflows module (src/workflows/index.ts, or its compiled dist/workflows/index.js). */
export function reelflowWorkflowsPath(): string {
  return require.resolve('../workflows');
}

/**
 * A workflows entry exporting the caller's workflows and reelflow's: webpack bundles it like any
 * `workflowsPath`. Written once per worker start into a fresh temporary directory, beside a link to the
 * node_modules that holds the caller's `@temporalio/workflow` (the SDK's bundler resolves its own
 * modules from the entry's directory).
 */
function combinedWorkflowsEntry(own: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'reelflow-workflows-'));
  const sdk = require.resolve('@temporalio/workflow/package.json', { paths: [dirname(own)] });
  symlinkSync(dirname(dirname(dirname(sdk))), join(dir, 'node_modules'), 'dir');
  const entry = join(dir, 'workflows.js');
  writeFileSync(
    entry,
    `export * from ${JSON.stringify(own)};\nexport * from ${JSON.stringify(reelflowWorkflowsPath())};\n`,
  );
  return entry;
}

function withWorkflows(worker: WorkerOptions): Partial<WorkerOptions> {
  if (worker.workflowBundle)
    refuse(
      'workflows',
      "cannot add reelflow's workflows to a prebuilt workflowBundle: give the worker a workflowsPath (or none) instead",
    );
  return {
    workflowsPath: worker.workflowsPath ? combinedWorkflowsEntry(worker.workflowsPath) : reelflowWorkflowsPath(),
  };
}

/**
 * reelflow on a team's own worker, through the SDK's plugin interface
 * (`Worker.create({ …, plugins: [reelflowPlugin()] })`): registers reelflow's activities under their
 * `reelflow.` types next to the worker's own — the step functions of reelflow/workflows schedule
 * them on the worker's task queue — and reelflow's workflow types too when `workflows: true`.
 * Options not given are read from the environment as `reelflow worker` reads them
 * (REELFLOW_SERVICE_URL, REELFLOW_API_KEY, REELFLOW_MEDIA_STORE, REELFLOW_ACCOUNT_*: docs/configuration.md).
 * Bad options stop the worker at start (`Worker.create` rejects) with a `ReelflowPluginOptionsError`
 * naming the option; a missing variable with a ConfigError naming it. The worker's own options are
 * never replaced: an activity of its own under a `reelflow.` type is refused, not overwritten.
 */
export function reelflowPlugin(options?: ReelflowPluginOptions): WorkerPlugin {
  const closers: (() => Promise<void> | void)[] = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  return {
    name: 'reelflow',
    async configureWorker(worker: WorkerOptions): Promise<WorkerOptions> {
      const checked = checkPluginOptions(options);
      try {
        return configure(worker, checked);
      } catch (error) {
        // Nothing this start opened outlives a refused start.
        await closeAll();
        throw error;
      }
    },
    async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
      try {
        await next(worker);
      } finally {
        await closeAll();
      }
    },
  };

  function configure(worker: WorkerOptions, checked: ReelflowPluginOptions): WorkerOptions {
    const needsEnv = checked.service === undefined || checked.media === undefined || checked.limits === undefined;
    const settings = needsEnv ? loadPluginSettings(checked.env) : undefined;
    let service: ServiceClient;
    let serviceUrl: string | undefined;
    const limits =
      checked.limits === false
        ? undefined
        : (checked.limits ??
          (() => {
            const made = accountLimits(settings!.account, () => service);
            closers.push(() => made.close());
            return made;
          })());
    if (checked.service && isServiceClient(checked.service as unknown as Record<string, unknown>)) {
      service = checked.service as ServiceClient;
    } else {
      const given = checked.service as ServiceConnectionOptions | undefined;
      const made = createServiceClient({
        baseUrl: given?.url ?? settings!.service.url,
        apiKey: given?.apiKey ?? settings!.service.apiKey,
        idempotency: given ? (given.idempotency ?? 'unknown') : settings!.service.idempotency,
        authScheme: given ? (given.authScheme ?? 'Key') : settings!.service.authScheme,
        cancelMethod: given ? (given.cancelMethod ?? 'POST') : settings!.service.cancelMethod,
        ...(limits ? { rateGate: limits } : {}),
      });
      closers.push(() => made.close());
      service = made;
      serviceUrl = given?.url ?? settings!.service.url;
    }
    const routeStore =
      checked.routeStore ??
      (() => {
        const opened = openRouteStore(loadRouteStoreSettings(checked.env).location);
        closers.push(() => opened.close());
        return opened;
      })();
    const activities = createActivities({
      client: service,
      routes: createRouteSubscriber(routeStore),
      media: checked.media ?? mediaDeps(serviceUrl, settings!.media),
      preflight: checked.preflight ?? (serviceUrl ? { trustedOrigins: [serviceUrl] } : {}),
      ...(limits ? { limits } : {}),
    });
    return {
      ...worker,
      ...(checked.workflows ? withWorkflows(worker) : {}),
      activities: mergeActivities(worker.activities, prefixedActivities(activities)),
    };
  }
}
