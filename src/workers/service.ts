import { serviceOptionsFromEnv } from '../service/env';
import { announceGeneratedKey } from '../service/generated-key';
import { startLocalService, type LocalService, type LocalServiceOptions } from '../service';
import { exitOnSignal } from './run-until-signal';

// The one door into the local service for the rest of reelflow (CLI, stack, benches): ESLint keeps
// src/cli, src/stack, src/bridge, src/activities and src/workflows out of src/service/**.
export { startLocalService, type LocalService, type LocalServiceOptions };
export { RENDER_MODES, type RenderMode } from '../service/config';

/**
 * Starts the local service as a process does: listens, then says where, on which data directory,
 * with which balance, and (when no key was configured) the generated key — in full only on a terminal,
 * masked when stdout is a log (see announceGeneratedKey).
 */
export async function startServiceProcess(options: LocalServiceOptions, write: (line: string) => void = console.log): Promise<LocalService> {
  const service = await startLocalService(options);
  write(`reelflow service listening on ${service.url}`);
  write(`data directory: ${options.dataDir}; credits: ${service.balance()}`);
  if (options.render === 'stub') write(`render: stub (pre-rendered fixtures, hold ${options.stubHoldMs ?? 0} ms) — a benchmarking aid, not real renders`);
  if (options.allowPrivateWebhooks) {
    write('warning: --allow-private-webhooks: private, loopback and plain-http webhook and input URLs are allowed (local use only)');
  }
  if (service.generatedApiKey) write(announceGeneratedKey(service.generatedApiKey, options.dataDir, process.stdout.isTTY === true));
  return service;
}

/**
 * Process entry point of the local service (`node dist/workers/service.js`, containers): options from
 * REELFLOW_SERVICE_* variables (see src/service/env.ts); `reelflow service` takes the same as flags.
 */
export async function runService(env: NodeJS.ProcessEnv = process.env): Promise<LocalService> {
  const service = await startServiceProcess(serviceOptionsFromEnv(env));
  exitOnSignal('reelflow service', () => service.close());
  return service;
}

if (require.main === module) {
  runService().catch((error: unknown) => {
    console.error(`reelflow service: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  });
}
