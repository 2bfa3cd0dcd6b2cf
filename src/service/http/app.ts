import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { DECIDED_LIMITS } from '../../contract';
import type { ServiceContext } from '../context';
import { registerAccountRoutes } from '../routes/account';
import { registerAdminRoutes } from '../routes/admin';
import { registerFileRoutes } from '../routes/files';
import { registerLookupRoutes } from '../routes/lookup';
import { registerPricingRoutes } from '../routes/pricing';
import { registerQueueRoutes } from '../routes/queue';
import { registerWebhookRoutes } from '../routes/webhooks';
import { authenticate } from './auth';
import { ServiceProblem } from './problem';

/** Largest request body (inline data URIs included): 50 MiB. Not in the spec; the local service's choice. */
export const BODY_LIMIT_BYTES = DECIDED_LIMITS.requestBodyMaxBytes;

export interface AppOptions {
  /** Read at request time: the context is complete only once the service is listening. */
  context: () => ServiceContext;
  /** Requests wait for this (crash recovery done) before they are handled. */
  ready: Promise<void>;
  logger: FastifyServerOptions['logger'];
}

/** Sends a problem document with the right status, content type and Retry-After. */
export function sendProblem(reply: FastifyReply, problem: ServiceProblem, request?: FastifyRequest): FastifyReply {
  if (problem.extras.retryAfterSeconds !== undefined) reply.header('retry-after', String(problem.extras.retryAfterSeconds));
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .send(JSON.stringify(problem.toDocument(request?.url.split('?')[0])));
}

/**
 * The fastify app of the local service, separate from the listener so it can be built and
 * injected in tests. Every error leaves as `application/problem+json` with a stable `code`.
 */
export function buildApp(options: AppOptions): FastifyInstance {
  const app = Fastify({
    logger: options.logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // The default request serializer logs no headers, so keys never reach the log.
    forceCloseConnections: true,
  });

  // JSON only; an empty body is accepted (e.g. a cancel POST) and reads as undefined.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([a-z0-9.-]+\+)?json\s*(;.*)?$/i, { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ServiceProblem('validation_failed', 'the request body is not valid JSON', { errors: [{ path: '(root)', message: 'is not valid JSON' }] }), undefined);
    }
  });

  app.addHook('onRequest', async (request) => {
    await options.ready;
    const url = request.url;
    if (!url.startsWith('/v1/') && url !== '/v1') return;
    const context = options.context();
    const delay = context.getFaults().responseDelayMs;
    if (delay > 0 && !url.startsWith('/v1/admin/')) await new Promise((resolve) => setTimeout(resolve, delay));
    // Every /v1 route needs an API key, checked before the body is read; output files are
    // public (like signed URLs).
    const header = request.headers.authorization;
    request.apiKeyId = authenticate(context.store.state, typeof header === 'string' ? header : undefined).id;
  });

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof ServiceProblem) return sendProblem(reply, error, request);
    const err = error as { statusCode?: number; code?: string; message?: string };
    if (err.statusCode === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendProblem(reply, new ServiceProblem('payload_too_large', `the request body exceeds ${BODY_LIMIT_BYTES} bytes`), request);
    }
    if (err.statusCode === 415 || err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendProblem(reply, new ServiceProblem('unsupported_media_type', 'request bodies must be application/json'), request);
    }
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      return sendProblem(reply, new ServiceProblem('validation_failed', err.message ?? 'bad request', { errors: [{ path: '(root)', message: err.message ?? 'bad request' }] }), request);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, new ServiceProblem('internal_error', 'the service failed to handle the request'), request);
  });

  app.setNotFoundHandler((request, reply) => sendProblem(reply, new ServiceProblem('not_found', `no route ${request.method} ${request.url.split('?')[0]}`), request));

  registerQueueRoutes(app, options.context);
  registerLookupRoutes(app, options.context);
  registerPricingRoutes(app, options.context);
  registerAccountRoutes(app, options.context);
  registerWebhookRoutes(app, options.context);
  registerAdminRoutes(app, options.context);
  registerFileRoutes(app, options.context);
  return app;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Id of the API key that authenticated the request. */
    apiKeyId?: string;
  }
}
