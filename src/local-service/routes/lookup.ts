import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context';
import { ServiceProblem } from '../http/errors';
import { generationRequest } from './queue';

const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * `GET /v1/queue/requests?idempotency_key=<key>` — a LOCAL EXTENSION (not in the service spec):
 * the jobs a key created (zero or one; the local service binds a key to one job), so an operator
 * can resolve an ambiguous submit by its key (docs/decisions/service.md). Each entry is the
 * submit's Generation request plus `idempotency_key`, `credits_charged`, `credits_refunded`,
 * `submitted_at`.
 */
export function registerLookupRoutes(app: FastifyInstance, context: () => ServiceContext): void {
  app.get<{ Querystring: Record<string, unknown> }>('/v1/queue/requests', async (request) => {
    const ctx = context();
    const key = request.query.idempotency_key;
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      throw new ServiceProblem('validation_failed', 'idempotency_key is required', {
        errors: [
          { path: 'idempotency_key', message: `must be given once, 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` },
        ],
      });
    }
    const id = ctx.store.state.idempotency.get(key);
    const job = id ? ctx.store.state.jobs.get(id) : undefined;
    return {
      idempotency_key: key,
      requests: job
        ? [
            {
              ...generationRequest(ctx, job),
              idempotency_key: key,
              credits_charged: job.creditsCharged,
              credits_refunded: job.creditsRefunded,
              submitted_at: new Date(job.submittedAt).toISOString(),
            },
          ]
        : [],
    };
  });
}
