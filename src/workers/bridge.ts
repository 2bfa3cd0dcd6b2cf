import { loadBridgeConfig } from '../bridge/config';
import { BridgeConfigError } from '../bridge/errors';
import { startBridgeServer, type RunningBridge } from '../bridge/server';
import { exitOnSignal } from './run-until-signal';

/**
 * Process entry point of the webhook bridge (`npx tsx src/workers/bridge.ts`, or `reelflow bridge`).
 * Configuration comes from the environment (src/bridge/config.ts); `overrides` are CLI flags.
 */
export async function runBridge(overrides: { host?: string; port?: number; path?: string } = {}): Promise<RunningBridge> {
  // Flags go through the same validation as the environment, so `--path nope` is refused by name.
  const config = loadBridgeConfig({
    ...process.env,
    ...(overrides.host !== undefined ? { REELFLOW_BRIDGE_HOST: overrides.host } : {}),
    ...(overrides.port !== undefined ? { REELFLOW_BRIDGE_PORT: String(overrides.port) } : {}),
    ...(overrides.path !== undefined ? { REELFLOW_BRIDGE_PATH: overrides.path } : {}),
  });
  const bridge = await startBridgeServer(config);
  console.log(`reelflow bridge listening on ${bridge.url}`);

  // Fastify stops accepting, answers in-flight deliveries, then the Temporal connection closes.
  exitOnSignal('reelflow bridge', () => bridge.close());
  return bridge;
}

if (require.main === module) {
  runBridge().catch((error: unknown) => {
    console.error(`reelflow bridge: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(error instanceof BridgeConfigError ? 2 : 1);
  });
}
