import { serviceOptionsFromEnv } from '../service/env';
import { announceGeneratedKey } from '../service/generated-key';
import { startLocalService, type LocalService } from '../service';
import { exitOnSignal } from './run-until-signal';

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

  exitOnSignal('reelflow service', () => service.close());
  return service;
}

if (require.main === module) {
  runService().catch((error: unknown) => {
    console.error(`reelflow service: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  });
}
