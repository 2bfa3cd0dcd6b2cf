import type { FastifyError, FastifyInstance, FastifyPluginAsync } from 'fastify';
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_WEBHOOK_PATH } from '../config/bridge';
import { checkDelivery, claimedId } from './delivery';
import type { EventSink } from './event-sink';
import { EventSinkUnavailableError } from './errors';
import { bridgeMetrics, defaultRegistry, type Registry } from '../metrics';

/** Options of the bridge routes, whether standalone or mounted in an existing Fastify app. */
export interface BridgeRouteOptions {
  /** Signing secrets; several during a rotation. */
  secrets: readonly string[];
  sink: EventSink;
  /** Webhook path, `/webhooks` by default. */
  path?: string;
  /** Largest accepted body in bytes (413 beyond), 1 MiB by default. */
  bodyLimit?: number;
  toleranceSeconds?: number;
  /** Adds GET /healthz and /readyz. Default true. */
  health?: boolean;
  /**
   * Registry the delivery metrics are counted in (`false`: the process registry too). No route serves
   * it here: the standalone bridge serves /metrics on its own listener (REELFLOW_BRIDGE_METRICS_PORT),
   * never on the public webhook port. Default: the process registry.
   */
  metrics?: Registry | false;
}

const problem = (status: number, code: string, title: string, extra: Record<string, unknown> = {}) => ({
  type: 'about:blank',
  title,
  status,
  code,
  ...extra,
});

const bridgePlugin: FastifyPluginAsync<BridgeRouteOptions> = async (app, options) => {
  const path = options.path ?? DEFAULT_WEBHOOK_PATH;
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT_BYTES;
  const secrets = [...options.secrets];
  const metrics = bridgeMetrics(options.metrics || defaultRegistry);
  if (secrets.length === 0 || secrets.some((secret) => secret.length === 0))
    throw new Error('bridge: at least one non-empty signing secret is required');

  // This plugin is encapsulated: the raw-bytes parser and error handler below do not leak into a host app.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status === 413) {
      metrics.deliveries.inc({ outcome: 'too_large' });
      request.log.warn(
        { outcome: 'too_large', webhook_id: claimedId(request.headers) },
        'webhook body over the size limit',
      );
      return reply
        .code(413)
        .type('application/problem+json')
        .send(problem(413, 'payload_too_large', 'Payload Too Large', { limit_bytes: bodyLimit }));
    }
    if (status >= 400 && status < 500) {
      metrics.deliveries.inc({ outcome: 'bad_request' });
      request.log.warn({ outcome: 'bad_request', err_code: error.code }, 'webhook request refused');
      return reply
        .code(status)
        .type('application/problem+json')
        .send(problem(status, 'bad_request', 'Bad Request'));
    }
    request.log.error({ err: error }, 'webhook handler failed');
    return reply
      .code(500)
      .type('application/problem+json')
      .send(problem(500, 'internal_error', 'Internal Server Error'));
  });

  app.post(path, { bodyLimit }, async (request, reply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const outcome = checkDelivery({
      headers: request.headers,
      body,
      secrets,
      ...(options.toleranceSeconds !== undefined ? { toleranceSeconds: options.toleranceSeconds } : {}),
    });

    if (outcome.kind === 'rejected') {
      metrics.deliveries.inc({ outcome: 'rejected' });
      metrics.verificationFailures.inc({ reason: outcome.reason });
      request.log.warn(
        { outcome: 'rejected', reason: outcome.reason, webhook_id: claimedId(request.headers) },
        'webhook delivery rejected',
      );
      // Empty body: a forger learns nothing about why.
      return reply.code(401).send();
    }
    if (outcome.kind === 'malformed') {
      metrics.deliveries.inc({ outcome: 'malformed' });
      request.log.error(
        { outcome: 'malformed', event_id: outcome.eventId, errors: outcome.errors },
        'well-signed webhook is not a valid event',
      );
      return reply
        .code(400)
        .type('application/problem+json')
        .send(problem(400, 'malformed_event', 'Malformed Event', { errors: outcome.errors }));
    }

    const { event } = outcome;
    try {
      await options.sink.deliver(event, body);
    } catch (error) {
      metrics.deliveries.inc({ outcome: 'unavailable' });
      const retryAfter = error instanceof EventSinkUnavailableError ? error.retryAfterSeconds : 1;
      request.log.error(
        {
          event_id: event.event_id,
          request_id: event.request_id,
          outcome: 'unavailable',
          err: error instanceof Error ? error.message : String(error),
        },
        'event not stored',
      );
      return reply
        .code(503)
        .header('retry-after', String(retryAfter))
        .type('application/problem+json')
        .send(problem(503, 'service_unavailable', 'Service Unavailable'));
    }
    metrics.deliveries.inc({ outcome: 'accepted' });
    // reelflow_bridge_signal_latency_seconds ends when Temporal accepts the signal: the forwarder observes it.
    // No log line per accepted delivery: at thousands a second it would cost more than the commit.
    return reply.code(202).send({ accepted: true, event_id: event.event_id });
  });

  if (options.health !== false) {
    app.get('/healthz', async () => ({ status: 'ok' }));
    app.get('/readyz', async (_request, reply) =>
      (await options.sink.ready())
        ? { status: 'ready' }
        : reply.code(503).send({ status: 'unavailable', store: 'unreachable' }),
    );
  }
};

/** Mounts the bridge routes into an existing Fastify app (encapsulated; the host's parsers are untouched). */
export async function mountBridge(app: FastifyInstance, options: BridgeRouteOptions): Promise<void> {
  await app.register(bridgePlugin, options);
}
