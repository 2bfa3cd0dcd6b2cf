import { serviceOptionsFromEnv } from '../service/env';
import { startLocalService, type LocalService } from '../service';

/**
 * Process entry point of the local service (`npx tsx src/workers/service.ts`); options come from
 * REELFLOW_SERVICE_* variables (see src/service/env.ts). `reelflow service` takes the same as flags.
 */
export async function runService(env: NodeJS.ProcessEnv = process.env): Promise<LocalService> {
  const service = await startLocalService(serviceOptionsFromEnv(env));
  console.log(`reelflow service listening on ${service.url}`);
  if (service.generatedApiKey) console.log(`no API key was configured; generated one (shown once): ${service.generatedApiKey}`);

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
