import { Context } from '@temporalio/activity';
import type { WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { createRouteSubscriber } from '../routing/subscriber';
import { openRouteStore } from '../routing/open-store';
import { loadRouteStoreSettings } from '../config/route-store';
import { loadAccountLimits, loadPluginSettings, loadWorkerDeployment, type PluginSettings } from '../config/worker';
import { createServiceClient } from '../client/service-client';
import type { RateGate, ServiceClient } from '../client/types';
import { accountLimits, mediaDeps, slotCapsOf } from '../workers/worker';
import { AccountSlots } from '../routing/account-slots';
import { temporalSlotSignaller } from '../routing/slot-signaller';
import type { RouteStore } from '../routing/store';
import { bundleCodeOf, defaultBuildId, versionedWorkerOptions } from '../workers/worker-deployment';
import { mergeActivities, prefixedActivities } from './activity-types';
import { ReelflowPluginOptionsError } from './errors';
import type { ReelflowPluginOptions, ServiceConnectionOptions } from './plugin-options';
import { withWorkflows } from './workflows-entry';
import { loadTracingSettings } from '../config/tracing';
import { activeTracing, startTracing, stopTracing, withTracing, type Tracing } from '../tracing';

/**
 * What `reelflowPlugin` does to a worker's options once they are checked: the service client, route store,
 * media store and account limits (given, or built from the environment), reelflow's activities beside the
 * worker's own, reelflow's workflows when asked and Worker Versioning when asked. Loaded by the plugin when
 * a worker is created, not when reelflow/worker is imported: it pulls in the service client, the stores and
 * the worker's process code.
 */

/**
 * The account's slots under the caps of the environment (REELFLOW_ACCOUNT_CONCURRENCY,
 * REELFLOW_MODEL_CONCURRENCY), none when nothing is capped. Grants are signalled with the activity's
 * own client; the host worker runs no reaper (a `reelflow worker` on the same store reaps).
 */
function slotsOf(
  routeStore: RouteStore,
  checked: ReelflowPluginOptions,
  service: ServiceClient,
): { slots?: AccountSlots } {
  const caps = slotCapsOf(loadAccountLimits(checked.env));
  if (!caps) return {};
  const signaller = () => temporalSlotSignaller(Context.current().client);
  const onProblem = (message: string, details: Record<string, unknown>) => Context.current().log.warn(message, details);
  return { slots: new AccountSlots({ store: routeStore.slots, caps, signaller, service, onProblem }) };
}

/** Closes what a worker start opened, in reverse order, when the worker stops (or its start is refused). */
export type Closers = (() => Promise<void> | void)[];

const isServiceClient = (value: unknown): value is ServiceClient =>
  typeof (value as { submit?: unknown } | undefined)?.submit === 'function';

function serviceOf(
  checked: ReelflowPluginOptions,
  settings: PluginSettings | undefined,
  limits: RateGate | undefined,
  closers: Closers,
): { service: ServiceClient; serviceUrl?: string } {
  if (isServiceClient(checked.service)) return { service: checked.service };
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
  return { service: made, serviceUrl: given?.url ?? settings!.service.url };
}

/**
 * The worker's Worker Versioning options when `versioning` asks for them (docs/safe-deploys.md): the
 * deployment name and build id given, else REELFLOW_DEPLOYMENT_NAME / REELFLOW_BUILD_ID, else `reelflow`
 * and the package version with a hash of the worker's workflow bundle. Pinned by default, as
 * `reelflow worker` runs.
 */
export function versioningOf(worker: WorkerOptions, checked: ReelflowPluginOptions): Partial<WorkerOptions> {
  if (!checked.versioning) return {};
  const refuse = (option: string, reason: string): never => {
    throw new ReelflowPluginOptionsError(`reelflowPlugin option "${option}": ${reason}`);
  };
  if (worker.workerDeploymentOptions)
    refuse('versioning', 'the worker already sets workerDeploymentOptions: give one or the other');
  const given = checked.versioning === true ? {} : checked.versioning;
  const fromEnv = given.deploymentName && given.buildId ? undefined : loadWorkerDeployment(checked.env);
  const buildId =
    given.buildId ??
    fromEnv?.buildId ??
    (worker.workflowBundle
      ? defaultBuildId(bundleCodeOf(worker.workflowBundle))
      : refuse(
          'versioning.buildId',
          "is needed when the worker has no workflowBundle (the default build id hashes the bundle's code); or set REELFLOW_BUILD_ID",
        ));
  return versionedWorkerOptions({ deploymentName: given.deploymentName ?? fromEnv!.deploymentName, buildId });
}

/**
 * The tracing a plugin's worker runs with: the process's when it traces already, else the one
 * OTEL_EXPORTER_OTLP_* configures (started here and stopped with the worker); none when `tracing` is false.
 */
function tracingOf(checked: ReelflowPluginOptions, closers: Closers): Tracing | null {
  if (checked.tracing === false) return null;
  const running = activeTracing();
  if (running) return running;
  const settings = loadTracingSettings('worker', checked.env);
  if (!settings) {
    if (checked.tracing === true)
      throw new ReelflowPluginOptionsError(
        'reelflowPlugin option "tracing": true needs OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)',
      );
    return null;
  }
  closers.push(stopTracing);
  return startTracing(settings);
}

/** The worker's options with reelflow on it; what it opened is added to `closers`. */
export function configureWorkerOptions(
  worker: WorkerOptions,
  checked: ReelflowPluginOptions,
  closers: Closers,
): WorkerOptions {
  const needsEnv = checked.service === undefined || checked.media === undefined || checked.limits === undefined;
  const settings = needsEnv ? loadPluginSettings(checked.env) : undefined;
  const limits =
    checked.limits === false
      ? undefined
      : (checked.limits ??
        (() => {
          const made = accountLimits(settings!.account);
          closers.push(() => made.close());
          return made;
        })());
  const made = serviceOf(checked, settings, limits, closers);
  const routeStore =
    checked.routeStore ??
    (() => {
      const opened = openRouteStore(loadRouteStoreSettings(checked.env).location);
      closers.push(() => opened.close());
      return opened;
    })();
  const activities = createActivities({
    client: made.service,
    routes: createRouteSubscriber(routeStore),
    media: checked.media ?? mediaDeps(made.serviceUrl, settings!.media),
    preflight: checked.preflight ?? (made.serviceUrl ? { trustedOrigins: [made.serviceUrl] } : {}),
    ...(checked.limits === false ? {} : slotsOf(routeStore, checked, made.service)),
  });
  const workflows = checked.workflows ? withWorkflows(worker) : {};
  return withTracing(
    {
      ...worker,
      ...workflows,
      ...versioningOf({ ...worker, ...workflows }, checked),
      activities: mergeActivities(worker.activities, prefixedActivities(activities)),
    },
    tracingOf(checked, closers),
  );
}
