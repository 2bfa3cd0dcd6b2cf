import type * as FastifyModule from 'fastify';
import type { FastifyInstance } from 'fastify';
import { requireOptional } from '../config/optional-packages';
import type { Logger } from 'pino';
import { mountBridge, type BridgeRouteOptions } from './plugin';
import { DEFAULT_BRIDGE_CONNECTION_LIMITS } from '../config/bridge';
import { bridgeMetrics, defaultRegistry } from '../metrics';
import {
  guardConnections,
  listenerTimeouts,
  resolveConnectionLimits,
  type ConnectionLimits,
} from '../net/connection-guard';

export interface BridgeAppOptions extends BridgeRouteOptions {
  /** A pino logger; `false` for none. Default: pino at info on stdout. */
  logger?: Logger | false;
  /**
   * Time limits and caps of the listener's connections: DEFAULT_BRIDGE_CONNECTION_LIMITS and caps
   * from the open-files limit by default (docs/decisions/bridge.md).
   */
  connections?: ConnectionLimits;
}

/** Paths of logged fields that could carry credentials; redacted whatever a caller logs. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["service-webhook-signature"]',
  'headers["service-webhook-signature"]',
];

/**
 * Builds the standalone bridge app (not listening yet, so tests and the CLI choose host and port).
 * The app keeps no state: any number of replicas can run behind one URL.
 */
export async function createBridgeApp(options: BridgeAppOptions): Promise<FastifyInstance> {
  const { logger, connections, ...routes } = options;
  // A delivery arrives whole well inside the service's 10 s sender timeout or its connection is cut,
  // and connections that hold a slot without finishing a request give it up to signed deliveries.
  const limits = resolveConnectionLimits(connections ?? DEFAULT_BRIDGE_CONNECTION_LIMITS);
  // Fastify is an optional peer: reelflow/webhooks and the worker never load it.
  const { fastify: Fastify, LogController } = requireOptional<typeof FastifyModule>('fastify');
  // The bridge writes one line per delivery itself (with event_id and request_id), so Fastify's own
  // per-request lines are off.
  const common = {
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: 'idle' as const,
    ...listenerTimeouts(limits),
  };
  const app: FastifyInstance = (logger
    ? Fastify({ ...common, loggerInstance: logger })
    : Fastify({
        ...common,
        logger: logger === false ? false : { redact: REDACT_PATHS },
      })) as unknown as FastifyInstance;
  const metrics = bridgeMetrics(routes.metrics || defaultRegistry);
  guardConnections(app.server, limits, (reason) => metrics.connectionsClosed.inc({ reason }));
  // On shutdown, answer in-flight deliveries with `Connection: close` so their keep-alive sockets do not
  // hold the closing server open until the keep-alive timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  await mountBridge(app, routes);
  return app;
}
