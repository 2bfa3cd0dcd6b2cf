import type { Command } from 'commander';
import { runBridge } from '../../workers/bridge';
import { portOption, variableFlags } from '../lib/options';

/** `reelflow bridge`: runs the webhook bridge until SIGINT/SIGTERM, through its one process entry point (src/workers/bridge.ts). */
export function registerBridgeCommand(program: Command): void {
  program
    .command('bridge')
    .description(
      'Run the webhook bridge: verify signed deliveries and hand them to Temporal (config from REELFLOW_WEBHOOK_SECRETS, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, REELFLOW_BRIDGE_*; docs/configuration.md)',
    )
    .option('--port <port>', 'port to listen on (0 picks a free one; default REELFLOW_BRIDGE_PORT or 8787)', portOption)
    .option('--host <host>', 'address to bind (default REELFLOW_BRIDGE_HOST or 127.0.0.1)')
    .option('--path <path>', 'webhook path (default REELFLOW_BRIDGE_PATH or /webhooks)')
    .action(async (options: { port?: number; host?: string; path?: string }) => {
      await runBridge(
        variableFlags(options, {
          port: ['REELFLOW_BRIDGE_PORT', '--port'],
          host: ['REELFLOW_BRIDGE_HOST', '--host'],
          path: ['REELFLOW_BRIDGE_PATH', '--path'],
        }),
      );
      // Keep running: the listener holds the event loop open until a signal stops it.
    });
}
