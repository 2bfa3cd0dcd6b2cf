import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { createBridgeApp, REDACT_PATHS } from './app';
import type { BridgeConfig } from '../config/bridge';
import { connectionOptions, describeTemporalConnection } from '../config/temporal';
import { createTemporalSink } from './temporal-sink';

/** A listening bridge and how to stop it. */
export interface RunningBridge {
  app: FastifyInstance;
  /** Full webhook URL, e.g. http://127.0.0.1:8787/webhooks. */
  url: string;
  port: number;
  /** Stops accepting, lets in-flight deliveries finish, then closes the Temporal connection. */
  close(): Promise<void>;
}

/**
 * Boots a bridge from validated configuration. The Temporal connection is lazy: the bridge starts even
 * while Temporal is down, reports not-ready on /readyz and answers 503 to deliveries until it is back.
 */
export async function startBridgeServer(
  config: BridgeConfig,
  options: { logger?: Logger } = {},
): Promise<RunningBridge> {
  const logger =
    options.logger ?? pino({ level: config.logLevel, redact: REDACT_PATHS, base: { service: 'reelflow-bridge' } });
  // The same options as the worker's and the CLI's (API key, TLS, mTLS with a private CA); an
  // unreadable certificate file stops the bridge here with a ConfigError naming its variable.
  const connection = Connection.lazy(connectionOptions(config.temporal));
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const sink = createTemporalSink({
    client,
    taskQueue: config.taskQueue,
    signalTimeoutMs: config.signalTimeoutMs,
    rendezvous: config.rendezvous,
  });
  const app = await createBridgeApp({
    secrets: config.secrets,
    sink,
    path: config.path,
    bodyLimit: config.bodyLimit,
    logger,
  });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await connection.close();
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
    },
    'bridge listening',
  );
  return {
    app,
    port,
    url: `http://${host}:${port}${config.path}`,
    async close() {
      await app.close();
      await connection.close();
    },
  };
}
