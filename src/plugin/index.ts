/**
 * reelflow/worker: reelflow on a Temporal worker. `reelflowPlugin` joins a team's own worker through
 * the SDK's plugin interface; `createReelflowWorker` builds a worker that runs only reelflow (what
 * `reelflow worker` runs).
 *
 * @module worker
 */
export {
  reelflowPlugin,
  checkPluginOptions,
  reelflowWorkflowsPath,
  type ReelflowPluginOptions,
  type ServiceConnectionOptions,
} from './plugin';
export { prefixedActivities, mergeActivities } from './activity-types';
export { ReelflowPluginOptionsError } from './errors';
export {
  createReelflowWorker,
  accountLimits,
  mediaDeps,
  mediaFromEnv,
  workerOptionsFrom,
  workerOptionsFromEnv,
  type ReelflowWorkerOptions,
} from '../workers/worker';
export { bundleProductionWorkflows } from '../workers/workflow-bundle';
export {
  defaultBuildId,
  packageVersion,
  setCurrentVersion,
  versionedWorkerOptions,
} from '../workers/worker-deployment';
export { ACTIVITY_PREFIX, reelflowActivityType } from '../contract/workflow-names';
