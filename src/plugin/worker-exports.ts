import type * as Deployment from '../workers/worker-deployment';
import type * as Bundle from '../workers/workflow-bundle';
import type * as WorkerModule from '../workers/worker';

/**
 * reelflow/worker's functions that live in the worker process's code (src/workers), loaded on first call:
 * that code pulls in the SDK's worker and client, pino and the metrics server, which importing
 * reelflow/worker for `reelflowPlugin` alone should not pay for. Each one is the function of the same
 * name in src/workers.
 */

/* eslint-disable @typescript-eslint/no-require-imports */
const workerModule = () => require('../workers/worker') as typeof WorkerModule;
const deployment = () => require('../workers/worker-deployment') as typeof Deployment;
const bundle = () => require('../workers/workflow-bundle') as typeof Bundle;
/* eslint-enable @typescript-eslint/no-require-imports */

export type { ReelflowWorkerOptions } from '../workers/worker';

/** Creates the worker that runs every reelflow workflow and activity on its task queue (what `reelflow worker` runs). */
export function createReelflowWorker(
  ...args: Parameters<typeof WorkerModule.createReelflowWorker>
): ReturnType<typeof WorkerModule.createReelflowWorker> {
  return workerModule().createReelflowWorker(...args);
}

/**
 * The account's shared 429 back-off (REELFLOW_ACCOUNT_LIMITS_DIR), the service client's `rateGate`. Caps on
 * jobs in flight are the route store's slots (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY), not this.
 */
export function accountLimits(
  ...args: Parameters<typeof WorkerModule.accountLimits>
): ReturnType<typeof WorkerModule.accountLimits> {
  return workerModule().accountLimits(...args);
}

/** The media store of the given settings (default: the environment's), for a worker talking to `serviceUrl`. */
export function mediaDeps(
  ...args: Parameters<typeof WorkerModule.mediaDeps>
): ReturnType<typeof WorkerModule.mediaDeps> {
  return workerModule().mediaDeps(...args);
}

/** The media store the environment configures, for a worker talking to `serviceUrl`. */
export function mediaFromEnv(
  ...args: Parameters<typeof WorkerModule.mediaFromEnv>
): ReturnType<typeof WorkerModule.mediaFromEnv> {
  return workerModule().mediaFromEnv(...args);
}

/** The worker options of the tuning variables (src/config/worker.ts). */
export function workerOptionsFrom(
  ...args: Parameters<typeof WorkerModule.workerOptionsFrom>
): ReturnType<typeof WorkerModule.workerOptionsFrom> {
  return workerModule().workerOptionsFrom(...args);
}

/** The worker options the environment's tuning variables give. */
export function workerOptionsFromEnv(
  ...args: Parameters<typeof WorkerModule.workerOptionsFromEnv>
): ReturnType<typeof WorkerModule.workerOptionsFromEnv> {
  return workerModule().workerOptionsFromEnv(...args);
}

/** Bundles reelflow's workflows the way the build does (production mode, no source map). */
export function bundleProductionWorkflows(
  ...args: Parameters<typeof Bundle.bundleProductionWorkflows>
): ReturnType<typeof Bundle.bundleProductionWorkflows> {
  return bundle().bundleProductionWorkflows(...args);
}

/** The default build id: the package version and a hash of the workflow bundle's code. */
export function defaultBuildId(
  ...args: Parameters<typeof Deployment.defaultBuildId>
): ReturnType<typeof Deployment.defaultBuildId> {
  return deployment().defaultBuildId(...args);
}

/** Worker options of a versioned worker, pinned by default (docs/safe-deploys.md). */
export function versionedWorkerOptions(
  ...args: Parameters<typeof Deployment.versionedWorkerOptions>
): ReturnType<typeof Deployment.versionedWorkerOptions> {
  return deployment().versionedWorkerOptions(...args);
}

/** Makes a version the current version of its deployment, waiting until its workers polled. */
export function setCurrentVersion(
  ...args: Parameters<typeof Deployment.setCurrentVersion>
): ReturnType<typeof Deployment.setCurrentVersion> {
  return deployment().setCurrentVersion(...args);
}
