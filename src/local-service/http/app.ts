import type * as FastifyModule from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { requireOptional } from '../../config/optional-packages';
import { DECIDED_LIMITS } from '../../contract';
import type { ServiceContext } from '../context';
import { registerAccountRoutes } from '../routes/account';
import { registerAdminRoutes } from '../routes/admin';
import { registerClockRoutes } from '../routes/clocks';
import { registerFileRoutes } from '../routes/files';
import { registerLookupRoutes } from '../routes/lookup';
import { registerPricingRoutes } from '../routes/pricing';
import { registerQueueRoutes } from '../routes/queue';
import { registerWebhookRoutes } from '../routes/webhooks';
import { authenticate, authenticateAdmin } from './auth';
import { stampReceivedAt } from './clock';
import { serviceListenerLimits } from './connection-limits';
import type { ConnectionLimits } from '../../net/connection-guard';
import { ServiceProblem } from './errors';

/** Largest request body (inline data URIs included): 50 MiB. Not in the spec; the local service's choice. */
export const BODY_LIMIT_BYTES = DECIDED_LIMITS.requestBodyMaxBytes;

export interface AppOptions {
  /** Read at request time: the context is complete only once the service is listening. */
  context: () => ServiceContext;
  /** Requests wait for this (crash recovery done) before they are handled. */
  ready: Promise<void>;
  logger: FastifyServerOptions['logger'];
  /** SHA-256 (hex) of the admin credential; null: the admin routes do not exist (404). */
  adminKeyHash: string | null;
  /** Time limits and caps of the listener's connections; DEFAULT_SERVICE_CONNECTION_LIMITS and caps from the open-files limit by default. */
  connections?: Partial<ConnectionLimits>;
}

/**
 * Who may call a route, set per route in `config.access`. A route that says nothing needs an
 * integration key: forgetting the setting fails closed.
 */
export type RouteAccess = 'key' | 'admin' | 'public';

/** One route as fastify registered it (HEAD twins of GET routes included). */
export interface RegisteredRoute {
  method: string;
  url: string;
  access: RouteAccess;
}

/** Sends a problem document with the right status, content type and Retry-After. */
export function sendProblem(reply: FastifyReply, problem: ServiceProblem, request?: FastifyRequest): FastifyReply {
  if (problem.extras.retryAfterSeconds !== undefined)
    reply.header('retry-after', String(problem.extras.retryAfterSeconds));
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .send(JSON.stringify(problem.toDocument(request?.url.split('?')[0])));
}

/**
 * The fastify app of the local service, separate from the listener so it can be built and
 * injected in tests. Every error leaves as `application/problem+json` with a stable `code`.
 */
export function buildApp(options: AppOptions): { app: FastifyInstance; routes: RegisteredRoute[] } {
  // A stalled or trickling request is cut, and a crowd of them cannot take the slots of complete ones.
  const limits = serviceListenerLimits(options.connections);
  // Fastify is an optional peer of the package, loaded when a service starts.
  const { fastify: Fastify } = requireOptional<typeof FastifyModule>('fastify');
  const app = Fastify({
    logger: options.logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // The default request serializer logs no headers, so keys never reach the log.
    forceCloseConnections: true,
    ...limits.fastify,
  });
  limits.guard(app.server);

  // Every route fastify registers, as it registers it: what the router test walks.
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const access: RouteAccess = (route.config as { access?: RouteAccess } | undefined)?.access ?? 'key';
    for (const method of methods) routes.push({ method: String(method), url: route.url, access });
  });

  // JSON only; an empty body is accepted (e.g. a cancel POST) and reads as undefined.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    /^application\/([a-z0-9.-]+\+)?json\s*(;.*)?$/i,
    { parseAs: 'string' },
    (_request, body, done) => {
      const text = String(body);
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch {
        done(
          new ServiceProblem('validation_failed', 'the request body is not valid JSON', {
            errors: [{ path: '(root)', message: 'is not valid JSON' }],
          }),
          undefined,
        );
      }
    },
  );

  stampReceivedAt(app);
  // Authentication belongs to the matched route (its config), never to a string test of the URL:
  // the router decodes and matches the path, so every spelling that reaches a handler reaches it
  // through this check. Unmatched requests have no route and go to the 404 handler.
  app.addHook('onRequest', async (request) => {
    await options.ready;
    if (request.routeOptions.url === undefined) return;
    const access: RouteAccess = request.routeOptions.config.access ?? 'key';
    if (access === 'public') return;
    const context = options.context();
    const header = typeof request.headers.authorization === 'string' ? request.headers.authorization : undefined;
    if (access === 'admin') {
      if (options.adminKeyHash === null) throw new ServiceProblem('not_found', 'no such route');
      authenticateAdmin(context.store.state, options.adminKeyHash, header);
      return;
    }
    const delay = context.getFaults().responseDelayMs;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    // Checked before the body is read.
    request.apiKeyId = authenticate(context.store.state, header).id;
  });

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof ServiceProblem) return sendProblem(reply, error, request);
    const err = error as { statusCode?: number; code?: string; message?: string };
    if (err.statusCode === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendProblem(
        reply,
        new ServiceProblem('payload_too_large', `the request body exceeds ${BODY_LIMIT_BYTES} bytes`),
        request,
      );
    }
    if (err.statusCode === 415 || err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendProblem(
        reply,
        new ServiceProblem('unsupported_media_type', 'request bodies must be application/json'),
        request,
      );
    }
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      return sendProblem(
        reply,
        new ServiceProblem('validation_failed', err.message ?? 'bad request', {
          errors: [{ path: '(root)', message: err.message ?? 'bad request' }],
        }),
        request,
      );
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(
      reply,
      new ServiceProblem('internal_error', 'the service failed to handle the request'),
      request,
    );
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      new ServiceProblem('not_found', `no route ${request.method} ${request.url.split('?')[0]}`),
      request,
    ),
  );

  registerQueueRoutes(app, options.context);
  registerLookupRoutes(app, options.context);
  registerPricingRoutes(app, options.context);
  registerAccountRoutes(app, options.context);
  registerWebhookRoutes(app, options.context);
  if (options.adminKeyHash !== null) {
    registerAdminRoutes(app, options.context);
    registerClockRoutes(app, options.context);
  }
  registerFileRoutes(app, options.context);
  return { app, routes };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route; default `key` (an integration API key). */
    access?: RouteAccess;
  }
  interface FastifyRequest {
    /** Id of the API key that authenticated the request. */
    apiKeyId?: string;
  }
}
