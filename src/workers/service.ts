import { serviceOptionsFromEnv } from '../service/env';
import { announceGeneratedKey } from '../service/generated-key';
import { startLocalService, type LocalService } from '../service';

/**
 * Process entry point of the local service (`npx tsx src/workers/service.ts`); options come from
 * REELFLOW_SERVICE_* variables (see src/service/env.ts). `reelflow service` takes the same as flags.
 */
export async function runService(env: NodeJS.ProcessEnv = process.env): Promise<LocalService> {
  const options = serviceOptionsFromEnv(env);
  const service = await startLocalService(options);
  console.log(`reelflow service listening on ${service.url}`);
  // A process entry point's stdout is a log: the key is masked there (see announceGeneratedKey).
  if (service.generatedApiKey) console.log(announceGeneratedKey(service.generatedApiKey, options.dataDir, process.stdout.isTTY === true));

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`reelflow service: error while stopping on ${signal}: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return service;
}

if (require.main === module) {
  runService().catch((error: unknown) => {
    console.error(`reelflow service: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  });
}
