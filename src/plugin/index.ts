/**
 * reelflow/worker: reelflow on a Temporal worker. `reelflowPlugin` joins a team's own worker through
 * the SDK's plugin interface; `createReelflowWorker` builds a worker that runs only reelflow (what
 * `reelflow worker` runs). Importing it loads only the plugin and its option checks: what builds the
 * activities loads when a worker is created, the worker process's code on first call.
 *
 * @module worker
 */
export {
  reelflowPlugin,
  checkPluginOptions,
  reelflowWorkflowsPath,
  type PluginVersioningOptions,
  type ReelflowPluginOptions,
  type ServiceConnectionOptions,
} from './plugin';
export { prefixedActivities, mergeActivities } from './activity-types';
export { ReelflowPluginOptionsError } from './errors';
export { MissingPackageError } from '../config/errors';
export {
  createReelflowWorker,
  accountLimits,
  mediaDeps,
  mediaFromEnv,
  workerOptionsFrom,
  workerOptionsFromEnv,
  bundleProductionWorkflows,
  defaultBuildId,
  setCurrentVersion,
  versionedWorkerOptions,
  type ReelflowWorkerOptions,
} from './worker-exports';
export { packageVersion } from '../config/package-version';
export { ACTIVITY_PREFIX, reelflowActivityType } from '../contract/workflow-names';
