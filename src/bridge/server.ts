import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { createBridgeApp, REDACT_PATHS } from './app';
import type { BridgeConfig } from '../config/bridge';
import { connectionOptions, describeTemporalConnection } from '../config/temporal';
import { DEFAULT_BACKLOG_LIMIT } from '../config/bridge';
import { DEFAULT_ROUTE_TTL_SECONDS } from '../config/route-store';
import { Inbox, startForwarder, type ForwarderOptions, type ForwardOutcome } from '../routing/inbox';
import { openRouteStore } from '../routing/open-store';
import { createPreparedSubmitter } from '../routing/prepared';
import { createServiceClient } from '../client/service-client';
import type { ServiceClient } from '../client/types';
import type { RouteStore } from '../routing/store';
import { describeRouteStoreLocation } from '../config/route-store-location';
import type { EventSink } from './event-sink';
import { startMetricsServer, type MetricsServer } from '../metrics/server';
import { bridgeMetrics, defaultRegistry, serviceResponseMetrics } from '../metrics';
import { activeTracing, startTracing, stopTracing, tracingClientInterceptors } from '../tracing';
import { describeTracing } from '../config/tracing';
import { AccountSlots } from '../routing/account-slots';
import { temporalSlotSignaller } from '../routing/slot-signaller';
import type { SlotCaps } from '../routing/slot-store';
import { slotMetrics } from '../metrics/slots';

/** Options of `startInboxSink`: the store, the Temporal client, and the forwarder's knobs. */
export interface InboxSinkOptions extends Omit<ForwarderOptions, 'inbox' | 'ttlMs'> {
  /** Pending deliveries beyond which `deliver` rejects (503). Default REELFLOW_BRIDGE_BACKLOG_LIMIT's. */
  backlogLimit?: number;
  /** Retention of delivered and unsubscribed deliveries. Default 24 h. */
  ttlMs?: number;
}

/**
 * The bridge's way of taking events, for a receiver of your own (`createWebhookReceiver` of
 * reelflow/webhooks): an inbox in `store` (the sink) and its forwarder signalling the subscribed
 * workflows. `stop()` stops the forwarder (the store stays open: it is the caller's).
 */
export function startInboxSink(options: InboxSinkOptions): { sink: EventSink; stop(): Promise<void> } {
  const { backlogLimit, ttlMs, onOutcome, onError, onSignalled, ...forwarder } = options;
  const inbox = new Inbox({
    store: options.store,
    backlogLimit: backlogLimit ?? DEFAULT_BACKLOG_LIMIT,
    // One clock for both halves: a delivery's commit time and its signal's acceptance are compared.
    ...(options.now ? { now: options.now } : {}),
  });
  // The backlog and the forwarder's failures are what tell an operator that Temporal is not taking
  // signals while the bridge keeps acknowledging (its readiness stays on the inbox).
  const metrics = bridgeMetrics(defaultRegistry);
  const unwatchBacklog = metrics.watchBacklog(() => inbox.backlog);
  const unwatchAge = metrics.watchOldestAge(() => inbox.oldestPendingAgeSeconds());
  const unwatch = () => {
    unwatchBacklog();
    unwatchAge();
  };
  const running = startForwarder({
    ...forwarder,
    inbox,
    ttlMs: ttlMs ?? DEFAULT_ROUTE_TTL_SECONDS * 1000,
    onOutcome: (outcome, delivery) => {
      if (outcome === 'temporal-retry') metrics.forwardFailures.inc({ kind: 'temporal_retry' });
      onOutcome?.(outcome, delivery);
    },
    onError: (error) => {
      metrics.forwardFailures.inc({ kind: 'round' });
      onError?.(error);
    },
    // From the delivery's commit to the inbox (its acknowledgement) to Temporal accepting its signal.
    onSignalled: (delivery, acceptedAt) => {
      metrics.signalLatency.observe({}, Math.max(0, acceptedAt - delivery.receivedAt) / 1000);
      onSignalled?.(delivery, acceptedAt);
    },
  });
  return {
    sink: inbox,
    stop: async () => {
      unwatch();
      await running.stop();
    },
  };
}

/**
 * The sink of an inbox you built yourself: the inbox is one (its `deliver` and `ready`), so pass the
 * inbox as `sink` directly. Kept for 0.3.0 callers; `store` is ignored (the inbox has its own).
 * @deprecated pass the `Inbox` itself as the sink.
 */
export function createInboxSink(inbox: Inbox, _store?: RouteStore): EventSink {
  return inbox;
}

/**
 * The account's slots as the bridge uses them: it frees the slot of a job whose terminal webhook it
 * forwards and signals the run the room went to (the workers' reapers sweep; the bridge runs none).
 */
function bridgeSlots(
  store: RouteStore,
  caps: SlotCaps,
  client: Client,
  service: ServiceClient | undefined,
  logger: Logger,
): AccountSlots {
  const metrics = slotMetrics({ snapshot: () => store.slots.snapshot(), caps });
  return new AccountSlots({
    store: store.slots,
    caps,
    signaller: () => temporalSlotSignaller(client),
    // With the account's key, the next waiting job goes to the service in the webhook's forward.
    ...(service ? { service } : {}),
    onGrant: (grant) => metrics.granted(grant.fairnessKey ?? ''),
    onProblem: (message, details) => logger.warn(details, message),
  });
}

/** A listening bridge and how to stop it. */
export interface RunningBridge {
  app: FastifyInstance;
  /** Full webhook URL, e.g. http://127.0.0.1:8787/webhooks. */
  url: string;
  port: number;
  /** The route store it appends to (the worker's subscriptions live there too). */
  store: RouteStore;
  /** Its /metrics on its own listener, when REELFLOW_BRIDGE_METRICS_PORT is set (never the webhook port). */
  metricsUrl?: string;
  /** Stops accepting, lets in-flight deliveries finish, stops the forwarder, then closes the store and the Temporal connection. */
  close(): Promise<void>;
}

/** In-process options of a bridge (the stack and tests); the process entry point passes none. */
export interface BridgeServerOptions {
  logger?: Logger;
  /** A store opened by the caller (kept open on close); default: the one `config.routeStore` names. */
  store?: RouteStore;
  /** Told what became of each delivery the forwarder handled (tests, benchmarks). */
  onForwarded?: (outcome: ForwardOutcome, requestId: string) => void;
}

/**
 * Boots a bridge from validated configuration: deliveries are acknowledged once the route store holds
 * them, and its forwarder signals them on. The Temporal connection is lazy: while Temporal is down the
 * bridge still acknowledges (the forwarder retries); while the store is down it answers 503.
 */
export async function startBridgeServer(
  config: BridgeConfig,
  options: BridgeServerOptions = {},
): Promise<RunningBridge> {
  const logger =
    options.logger ?? pino({ level: config.logLevel, redact: REDACT_PATHS, base: { service: 'reelflow-bridge' } });
  // The same options as the worker's and the CLI's (API key, TLS, mTLS with a private CA); an
  // unreadable certificate file stops the bridge here with a ConfigError naming its variable.
  const connection = Connection.lazy(connectionOptions(config.temporal));
  // Tracing (OTEL_EXPORTER_OTLP_*): started here unless the process traces already (the local stack).
  const ownTracing = config.tracing && !activeTracing() ? startTracing(config.tracing) : undefined;
  const client = new Client({
    connection,
    namespace: config.temporal.namespace,
    interceptors: tracingClientInterceptors(),
  });
  // Its forwarder checkpoints the SQLite log when deliveries are quiet, never inside a burst's commits.
  const store = options.store ?? openRouteStore(config.routeStore.location, { sqlite: { checkpoints: 'caller' } });
  // With the account's key, the bridge submits what pipelines prepared (src/routing/prepared.ts).
  const service = config.service
    ? createServiceClient({
        baseUrl: config.service.url,
        apiKey: config.service.apiKey,
        idempotency: config.service.idempotency,
        authScheme: config.service.authScheme,
        cancelMethod: config.service.cancelMethod,
        onResponse: serviceResponseMetrics(),
      })
    : undefined;
  const submitter = service
    ? createPreparedSubmitter({
        store,
        client: service,
        serviceOrigin: config.service!.url,
        onGiveUp: (requestId, reason) =>
          logger.warn({ request_id: requestId, reason }, 'prepared submit left to the pipeline'),
      })
    : undefined;
  const slots = config.slotCaps ? bridgeSlots(store, config.slotCaps, client, service, logger) : undefined;
  const { sink, stop } = startInboxSink({
    store,
    client,
    ...(slots ? { slots } : {}),
    backlogLimit: config.backlogLimit,
    signalTimeoutMs: config.signalTimeoutMs,
    ttlMs: config.routeStore.ttlMs,
    ...(submitter ? { submitter } : {}),
    onError: (error) =>
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'forwarder will retry'),
    ...(options.onForwarded
      ? { onOutcome: (outcome, delivery) => options.onForwarded!(outcome, delivery.requestId) }
      : {}),
  });
  const shutdown = async () => {
    await stop();
    if (!options.store) await store.close();
    await service?.close();
    await connection.close();
    if (ownTracing) await stopTracing();
  };
  const app = await createBridgeApp({
    secrets: config.secrets,
    sink,
    path: config.path,
    bodyLimit: config.bodyLimit,
    logger,
    ...(config.connections ? { connections: config.connections } : {}),
  });
  let metrics: MetricsServer | undefined;
  try {
    await app.listen({ host: config.host, port: config.port });
    if (config.metrics) metrics = await startMetricsServer({ host: config.metrics.host, port: config.metrics.port });
  } catch (error) {
    await app.close();
    await shutdown();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  logger.info(
    {
      host: config.host,
      port,
      path: config.path,
      temporal: describeTemporalConnection(config.temporal),
      route_store: describeRouteStoreLocation(config.routeStore.location),
      ...(metrics ? { metrics: metrics.url } : {}),
      tracing: describeTracing(activeTracing()?.settings),
    },
    'bridge listening',
  );
  return {
    app,
    port,
    url: `http://${host}:${port}${config.path}`,
    store,
    ...(metrics ? { metricsUrl: metrics.url } : {}),
    async close() {
      await app.close();
      await metrics?.close();
      await shutdown();
    },
  };
}
