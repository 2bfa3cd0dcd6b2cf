import type { Command } from 'commander';
import { main as runWorker } from '../../workers/worker';

/** `reelflow worker`: the Temporal worker process, through its one entry point (src/workers/worker.ts; the compose file and the benches run the same). */
export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'Run a Temporal worker for reelflow pipelines until SIGINT/SIGTERM (config from TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, REELFLOW_TASK_QUEUE, REELFLOW_SERVICE_URL, REELFLOW_API_KEY, ...; docs/configuration.md)',
    )
    .action(async () => {
      await runWorker();
    });
}
