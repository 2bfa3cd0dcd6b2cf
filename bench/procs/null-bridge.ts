/**
 * The bridge bench's no-Temporal baseline, its own process: the same bridge code
 * (createBridgeApp from the compiled dist/bridge: HTTP, body limit, signature check, parsing) with a
 * sink that drops every event, so bridge ÷ baseline isolates the Temporal hand-off.
 * Env: REELFLOW_WEBHOOK_SECRETS, BENCH_NULL_BRIDGE_PORT. Prints "null bridge listening on <url>".
 */
import * as path from 'node:path';

type BridgeModule = typeof import('../../src/bridge');

async function main(): Promise<void> {
  // The compiled bridge, as the real bridge process runs it (bench/run.ts builds dist first).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createBridgeApp } = require(path.join(__dirname, '..', '..', 'dist', 'bridge')) as BridgeModule;
  const secrets = (process.env.REELFLOW_WEBHOOK_SECRETS ?? '').split(',').filter(Boolean);
  const app = await createBridgeApp({
    secrets,
    sink: { deliver: async () => undefined, ready: async () => true },
    logger: false,
  });
  const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.BENCH_NULL_BRIDGE_PORT ?? 0) });
  console.log(`null bridge listening on ${address}/webhooks`);
  const stop = () => void app.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
