import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { toFieldErrors } from '../../contract';
import type { ServiceContext } from '../context';
import { ServiceProblem } from '../http/errors';
import type { EndpointRecord } from '../store/records';
import { ENDPOINT_EVENT_TYPES, endpointEvents } from '../webhooks/events';

const createSchema = z.strictObject({
  url: z.string().min(1).max(2048),
  events: z
    .array(z.enum(ENDPOINT_EVENT_TYPES))
    .min(1)
    .refine((events) => new Set(events).size === events.length, 'must not repeat an event kind')
    .optional(),
});

const rotateSchema = z
  .strictObject({
    grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .optional(),
  })
  .optional();

/** A new signing secret (`whsec_` + 32 random bytes, base64url). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function publicView(endpoint: EndpointRecord): Record<string, unknown> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpointEvents(endpoint),
    created_at: new Date(endpoint.createdAt).toISOString(),
  };
}

function findEndpoint(ctx: ServiceContext, id: string): EndpointRecord {
  const endpoint = ctx.store.state.endpoints.get(id);
  if (!endpoint) throw new ServiceProblem('not_found', `no webhook endpoint ${id}`);
  return endpoint;
}

/** Account-level webhook endpoints: register (secret shown once), list, delete, rotate. */
export function registerWebhookRoutes(app: FastifyInstance, context: () => ServiceContext): void {
  app.post<{ Body: unknown }>('/v1/webhooks/endpoints', async (request, reply) => {
    const ctx = context();
    const parsed = createSchema.safeParse(request.body ?? {});
    if (!parsed.success)
      throw new ServiceProblem('validation_failed', 'invalid webhook endpoint', {
        errors: toFieldErrors(parsed.error),
      });
    const check = await ctx.checkWebhookUrl(parsed.data.url, { allowPrivate: ctx.allowPrivateWebhooks });
    if (!check.ok) {
      throw new ServiceProblem('webhook_url_refused', `the webhook URL is refused: ${check.reason}`, {
        errors: [{ path: 'url', message: check.reason }],
      });
    }
    const endpoint: EndpointRecord = {
      id: `we_${randomUUID().replace(/-/g, '').slice(0, 20)}`,
      url: parsed.data.url,
      secret: newSigningSecret(),
      previousSecret: null,
      previousSecretExpiresAt: null,
      createdAt: Date.now(),
      ...(parsed.data.events ? { events: parsed.data.events } : {}),
    };
    ctx.store.commit({ t: 'endpoint.created', endpoint });
    return reply.code(201).send({ ...publicView(endpoint), secret: endpoint.secret });
  });

  app.get('/v1/webhooks/endpoints', async () => ({
    endpoints: [...context().store.state.endpoints.values()].map(publicView),
  }));

  app.delete<{ Params: { id: string } }>('/v1/webhooks/endpoints/:id', async (request, reply) => {
    const ctx = context();
    findEndpoint(ctx, request.params.id);
    ctx.store.commit({ t: 'endpoint.deleted', id: request.params.id });
    return reply.code(204).send();
  });

  // The old secret keeps signing (a second v1= entry) until the grace period ends.
  app.post<{ Params: { id: string }; Body: unknown }>('/v1/webhooks/endpoints/:id/rotate', async (request) => {
    const ctx = context();
    const endpoint = findEndpoint(ctx, request.params.id);
    const parsed = rotateSchema.safeParse(request.body);
    if (!parsed.success)
      throw new ServiceProblem('validation_failed', 'invalid rotation request', {
        errors: toFieldErrors(parsed.error),
      });
    const graceSeconds = parsed.data?.grace_seconds ?? ctx.secretGraceSeconds;
    const previousSecretExpiresAt = Date.now() + graceSeconds * 1000;
    const secret = newSigningSecret();
    ctx.store.commit({
      t: 'endpoint.rotated',
      id: endpoint.id,
      secret,
      previousSecret: endpoint.secret,
      previousSecretExpiresAt,
    });
    return {
      ...publicView(endpoint),
      secret,
      previous_secret_expires_at: new Date(previousSecretExpiresAt).toISOString(),
    };
  });
}
