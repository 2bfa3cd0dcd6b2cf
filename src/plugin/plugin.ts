import type { ReplayWorkerOptions, Worker, WorkerOptions, WorkerPlugin } from '@temporalio/worker';
import type * as Configure from './configure';
import { checkPluginOptions, type ReelflowPluginOptions } from './plugin-options';
import { withWorkflows } from './workflows-entry';

export {
  checkPluginOptions,
  type PluginVersioningOptions,
  type ReelflowPluginOptions,
  type ServiceConnectionOptions,
} from './plugin-options';
export { reelflowWorkflowsPath } from './workflows-entry';

/**
 * The code that builds the activities (service client, stores, the worker's process code), loaded when a
 * worker is created: importing reelflow/worker stays cheap, and a replay worker never loads it.
 */
function loadConfigure(): typeof Configure {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./configure') as typeof Configure;
}

/**
 * reelflow on a team's own worker, through the SDK's plugin interface
 * (`Worker.create({ …, plugins: [reelflowPlugin()] })`): registers reelflow's activities under their
 * `reelflow.` types next to the worker's own — the step functions of reelflow/workflows schedule
 * them on the worker's task queue — reelflow's workflow types too when `workflows: true`, and Worker
 * Versioning when `versioning` asks for it. A replay worker (`Worker.runReplayHistories` with the same
 * plugin) gets reelflow's workflow types when `workflows: true` and nothing else: replay runs no activity.
 * Options not given are read from the environment as `reelflow worker` reads them
 * (REELFLOW_SERVICE_URL, REELFLOW_API_KEY, REELFLOW_MEDIA_STORE, REELFLOW_ACCOUNT_*: docs/configuration.md).
 * Bad options stop the worker at start (`Worker.create` rejects) with a `ReelflowPluginOptionsError`
 * naming the option; a missing variable with a ConfigError naming it. The worker's own options are
 * never replaced: an activity of its own under a `reelflow.` type is refused, not overwritten.
 */
export function reelflowPlugin(options?: ReelflowPluginOptions): WorkerPlugin {
  const closers: Configure.Closers = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  return {
    name: 'reelflow',
    async configureWorker(worker: WorkerOptions): Promise<WorkerOptions> {
      const checked = checkPluginOptions(options);
      try {
        return loadConfigure().configureWorkerOptions(worker, checked, closers);
      } catch (error) {
        // Nothing this start opened outlives a refused start.
        await closeAll();
        throw error;
      }
    },
    configureReplayWorker(worker: ReplayWorkerOptions): ReplayWorkerOptions {
      const checked = checkPluginOptions(options);
      return checked.workflows ? { ...worker, ...withWorkflows(worker) } : worker;
    },
    async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
      try {
        await next(worker);
      } finally {
        await closeAll();
      }
    },
  };
}
