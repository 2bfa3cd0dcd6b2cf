import type * as FastifyModule from 'fastify';
import type { FastifyInstance } from 'fastify';
import { requireOptional } from '../config/optional-packages';
import type { Logger } from 'pino';
import { mountBridge, type BridgeRouteOptions } from './plugin';

export interface BridgeAppOptions extends BridgeRouteOptions {
  /** A pino logger; `false` for none. Default: pino at info on stdout. */
  logger?: Logger | false;
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
  const { logger, ...routes } = options;
  // Fastify is an optional peer: reelflow/webhooks and the worker never load it.
  const { fastify: Fastify, LogController } = requireOptional<typeof FastifyModule>('fastify');
  // The bridge writes one line per delivery itself (with event_id and request_id), so Fastify's own
  // per-request lines are off.
  const common = {
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: 'idle' as const,
  };
  const app: FastifyInstance = (logger
    ? Fastify({ ...common, loggerInstance: logger })
    : Fastify({
        ...common,
        logger: logger === false ? false : { redact: REDACT_PATHS },
      })) as unknown as FastifyInstance;
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
