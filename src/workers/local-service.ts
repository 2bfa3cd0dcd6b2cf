import { CONFIG_EXIT_CODE, ConfigError, loadServiceConfig, type Flags } from '../config';
import { announceGeneratedKey } from '../local-service/generated-key';
import { startLocalService, type LocalService, type LocalServiceOptions } from '../local-service';
import { exitOnSignal } from './run-until-signal';

// The one door into the local service for the rest of reelflow (CLI, stack, benches): ESLint keeps
// src/cli, src/stack, src/bridge, src/activities and src/workflows out of src/local-service/**.
export { startLocalService, type LocalService, type LocalServiceOptions };
export { RENDER_MODES, type RenderMode } from '../config';

/**
 * Starts the local service as a process does: listens, then says where, on which data directory,
 * with which balance, and (when no key was configured) the generated key — in full only on a terminal,
 * masked when stdout is a log (see announceGeneratedKey).
 */
export async function startServiceProcess(
  options: LocalServiceOptions,
  write: (line: string) => void = console.log,
): Promise<LocalService> {
  const service = await startLocalService(options);
  write(`reelflow service listening on ${service.url}`);
  write(`data directory: ${options.dataDir}; credits: ${service.balance()}`);
  if (options.render === 'stub')
    write(
      `render: stub (pre-rendered fixtures, hold ${options.stubHoldMs ?? 0} ms) — a benchmarking aid, not real renders`,
    );
  if (options.allowPrivateWebhooks) {
    write(
      'warning: --allow-private-webhooks: private, loopback and plain-http webhook and input URLs are allowed (local use only)',
    );
  }
  if (service.generatedApiKey)
    write(announceGeneratedKey(service.generatedApiKey, options.dataDir, process.stdout.isTTY === true));
  return service;
}

/**
 * Process entry point of the local service (`node dist/workers/local-service.js`, `reelflow service`,
 * containers, the benches): settings from SERVICE_VARIABLES (REELFLOW_SERVICE_*, src/config),
 * validated at boot; `flags` (`reelflow service --port ...`) stand for their variables. Runs until
 * SIGINT/SIGTERM.
 */
export async function runService(
  flags: Flags = {},
  write: (line: string) => void = console.log,
): Promise<LocalService> {
  const service = await startServiceProcess(loadServiceConfig(undefined, flags), write);
  exitOnSignal('reelflow service', async () => {
    write('reelflow service: stopping');
    await service.close();
    write('reelflow service stopped');
  });
  return service;
}

if (require.main === module) {
  runService().catch((error: unknown) => {
    console.error(`reelflow service: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(error instanceof ConfigError ? CONFIG_EXIT_CODE : 1);
  });
}
