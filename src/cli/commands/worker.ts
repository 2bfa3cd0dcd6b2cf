import type { Command } from 'commander';
import { ConfigError, TemporalConfigError } from '../../config';
import { main as runWorker } from '../../workers/worker';
import { CliError } from '../errors';
import { EXIT } from '../exit';

/** `reelflow worker`: the Temporal worker process (the same entry point the compose file and the benches run). */
export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'Run a Temporal worker for reelflow pipelines until SIGINT/SIGTERM (config from TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, REELFLOW_TASK_QUEUE, REELFLOW_SERVICE_URL, REELFLOW_API_KEY; see .env.example)',
    )
    .action(async () => {
      try {
        await runWorker();
      } catch (error) {
        if (error instanceof ConfigError || error instanceof TemporalConfigError) throw new CliError(error.message, EXIT.usage);
        throw error;
      }
    });
}
