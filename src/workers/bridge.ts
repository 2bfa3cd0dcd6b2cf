import { CONFIG_EXIT_CODE, ConfigError, loadBridgeConfig, type Flags } from '../config';
import { startBridgeServer, type RunningBridge } from '../bridge/server';
import { exitOnSignal } from './run-until-signal';

// In-process starts (the local stack) go through this module too, with a config they build.
export { startBridgeServer, type RunningBridge };

/**
 * Process entry point of the webhook bridge (`node dist/workers/bridge.js`, `reelflow bridge`, the
 * compose file, the benches). Configuration: BRIDGE_VARIABLES (src/config), validated at boot; `flags`
 * (`reelflow bridge --host/--port/--path`) stand for their variables.
 */
export async function runBridge(flags: Flags = {}): Promise<RunningBridge> {
  const bridge = await startBridgeServer(loadBridgeConfig(undefined, flags));
  console.log(`reelflow bridge listening on ${bridge.url}`);
  if (bridge.metricsUrl) console.log(`reelflow bridge metrics on ${bridge.metricsUrl}`);

  // Fastify stops accepting, answers in-flight deliveries, then the Temporal connection closes.
  exitOnSignal('reelflow bridge', () => bridge.close());
  return bridge;
}

if (require.main === module) {
  runBridge().catch((error: unknown) => {
    console.error(`reelflow bridge: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(error instanceof ConfigError ? CONFIG_EXIT_CODE : 1);
  });
}
