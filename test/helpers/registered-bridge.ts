import { loadBridgeConfig, startBridgeServer, type RunningBridge } from '../../src/bridge';
import { freePort } from '../../src/stack/stack-state';
import { api, TEST_API_KEY } from './local-service';
import { testRouteStore } from './route-store';
import type { RouteStore } from '../../src/routing';

/** A real bridge registered as the local service's webhook endpoint. */
export interface RegisteredBridge {
  bridge: RunningBridge;
  /** Id of the endpoint at the service (delete it to force the polling fallback). */
  endpointId: string;
  /** The endpoint's signing secret (what the bridge verifies with). */
  secret: string;
}

/**
 * Registers `http://127.0.0.1:<free port>/webhooks` as an endpoint of the local service (which
 * must allow private webhooks), then starts the real bridge on that port with the endpoint's
 * secret, so the service's own signed deliveries reach Temporal (through the route store the
 * worker of `taskQueue` subscribes in).
 */
export async function startRegisteredBridge(options: {
  serviceUrl: string;
  temporalAddress: string;
  taskQueue: string;
  logLevel?: 'silent' | 'warn' | 'info';
  /** Event kinds the endpoint asks for; the service's default (completions only) when absent. */
  events?: readonly string[];
  /** The route store shared with the worker; default the test store of `taskQueue` (testRouteStore). */
  store?: RouteStore;
  /** Give the bridge the service's key, so it submits the steps pipelines prepared. Default true. */
  submits?: boolean;
  /** Serve the bridge's /metrics on a free port of its own (`bridge.metricsUrl`). Default false. */
  metrics?: boolean;
  /** The workers' caps, as REELFLOW_ACCOUNT_CONCURRENCY and REELFLOW_MODEL_CONCURRENCY: the bridge frees finished jobs' slots. */
  slotCaps?: { account?: number; models: Readonly<Record<string, number>> };
}): Promise<RegisteredBridge> {
  const port = await freePort();
  const registered = await api(options.serviceUrl, 'POST', '/v1/webhooks/endpoints', {
    body: { url: `http://127.0.0.1:${port}/webhooks`, ...(options.events ? { events: options.events } : {}) },
  });
  if (registered.status !== 201)
    throw new Error(`webhook endpoint registration: HTTP ${registered.status} ${JSON.stringify(registered.body)}`);
  const bridge = await startBridgeServer(
    loadBridgeConfig({
      REELFLOW_WEBHOOK_SECRETS: String(registered.body.secret),
      TEMPORAL_ADDRESS: options.temporalAddress,
      REELFLOW_BRIDGE_PORT: String(port),
      REELFLOW_LOG_LEVEL: options.logLevel ?? 'silent',
      ...(options.metrics ? { REELFLOW_BRIDGE_METRICS_PORT: '0' } : {}),
      ...(options.slotCaps?.account !== undefined
        ? { REELFLOW_ACCOUNT_CONCURRENCY: String(options.slotCaps.account) }
        : {}),
      ...(options.slotCaps
        ? {
            REELFLOW_MODEL_CONCURRENCY: Object.entries(options.slotCaps.models)
              .map(([model, cap]) => `${model}=${cap}`)
              .join(','),
          }
        : {}),
      ...(options.submits === false
        ? {}
        : {
            REELFLOW_SERVICE_URL: options.serviceUrl,
            REELFLOW_API_KEY: TEST_API_KEY,
            REELFLOW_SERVICE_IDEMPOTENCY: 'honoured',
          }),
    }),
    { store: options.store ?? testRouteStore(options.taskQueue) },
  );
  return { bridge, endpointId: String(registered.body.id), secret: String(registered.body.secret) };
}
