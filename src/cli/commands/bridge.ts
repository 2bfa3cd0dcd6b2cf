import type { Command } from 'commander';
import { BridgeConfigError } from '../../bridge/errors';
import { runBridge } from '../../workers/bridge';
import { portOption } from '../options';


/** `reelflow bridge`: runs the webhook bridge until SIGINT/SIGTERM. */
export function registerBridgeCommand(program: Command): void {
  program
    .command('bridge')
    .description('Run the webhook bridge: verify signed deliveries and hand them to Temporal (config from REELFLOW_WEBHOOK_SECRETS, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE)')
    .option('--port <port>', 'port to listen on (0 picks a free one; default REELFLOW_BRIDGE_PORT or 8787)', portOption)
    .option('--host <host>', 'address to bind (default REELFLOW_BRIDGE_HOST or 127.0.0.1)')
    .option('--path <path>', 'webhook path (default REELFLOW_BRIDGE_PATH or /webhooks)')
    .action(async (options: { port?: number; host?: string; path?: string }) => {
      try {
        await runBridge(options);
      } catch (error) {
        if (error instanceof BridgeConfigError) process.exitCode = 2;
        throw error;
      }
      // Keep running: the listener holds the event loop open until a signal stops it.
    });
}
