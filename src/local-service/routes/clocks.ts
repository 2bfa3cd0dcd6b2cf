import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context';
import type { JobRecord } from '../store/records';

/** A job's identity and clocks, as `GET /v1/admin/jobs` lists them (no inputs, no results). */
export interface JobClocks {
  id: string;
  model: string;
  status: JobRecord['status'];
  idempotencyKey: string | null;
  /** Submit request arrived (before fetching and pricing). */
  receivedAt: number;
  /** Job created (after pricing). */
  submittedAt: number;
  startedAt: number | null;
  /** Job became terminal. */
  completedAt: number | null;
  /** The request whose output file this job's `video_url` names (a chained step), else null. */
  inputRequestId: string | null;
  /** When the service first sent a webhook delivery of the job's outcome (its earliest endpoint), else null. */
  webhookSentAt: number | null;
}

/**
 * The service's own clocks and call counters, for benchmarks that run the service as a separate
 * process: `GET /v1/admin/jobs` answers `{ jobs: JobClocks[], counters }`. An admin route: it exists
 * only with an admin credential (`--admin-key`) and takes that credential and no API key.
 */
export function registerClockRoutes(app: FastifyInstance, context: () => ServiceContext): void {
  app.get('/v1/admin/jobs', { config: { access: 'admin' as const } }, async () => {
    const ctx = context();
    const webhookSentAt = new Map<string, number>();
    for (const delivery of ctx.store.state.deliveries.values()) {
      const sentAt = delivery.attemptLog?.[0]?.sentAt;
      const earliest = webhookSentAt.get(delivery.requestId);
      if (sentAt !== undefined && (earliest === undefined || sentAt < earliest))
        webhookSentAt.set(delivery.requestId, sentAt);
    }
    const jobs: JobClocks[] = [...ctx.store.state.jobs.values()].map((job) => ({
      id: job.id,
      model: job.model,
      status: job.status,
      idempotencyKey: job.idempotencyKey,
      receivedAt: job.receivedAt ?? job.submittedAt,
      submittedAt: job.submittedAt,
      startedAt: job.startedAt,
      completedAt: job.completedAt,
      inputRequestId: job.inputRequestId ?? null,
      webhookSentAt: webhookSentAt.get(job.id) ?? null,
    }));
    return { jobs, counters: { ...ctx.counters } };
  });
}
