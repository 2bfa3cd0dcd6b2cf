import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { validateModelId, validateModelInput, type ModelId } from '../../contract';
import type { ServiceContext } from '../context';
import { chance, journalFault } from '../faults';
import { hashBody } from '../http/canonical';
import { ServiceProblem } from '../http/errors';
import { priceOf } from '../queue/pricing';
import type { JobRecord } from '../store/records';

const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The Generation request document of a job (submit answer). */
export function generationRequest(ctx: ServiceContext, job: JobRecord): Record<string, unknown> {
  const base = `${ctx.publicUrl}/v1/queue/requests/${encodeURIComponent(job.id)}`;
  return {
    request_id: job.id,
    status: job.status,
    model: job.model,
    status_url: `${base}/status`,
    response_url: base,
    cancel_url: `${base}/cancel`,
    queue_position: ctx.jobs.queuePosition(job),
  };
}

function findJob(ctx: ServiceContext, id: string): JobRecord {
  const job = ctx.store.state.jobs.get(id);
  if (!job) throw new ServiceProblem('not_found', `no request ${id}`);
  return job;
}

type SubmitRoute = { Params: { model: string }; Body: unknown };

/** Fault injection: the submit fails before any job is created (journalled, so tests can count it). */
function injectSubmitError(ctx: ServiceContext, request: FastifyRequest<SubmitRoute>): void {
  const faults = ctx.getFaults();
  if (!chance(faults.submitErrorRate)) return;
  const status = faults.submitErrorStatus;
  const key = request.headers['idempotency-key'];
  journalFault(ctx.store, {
    kind: 'submit_error',
    requestId: null,
    idempotencyKey: typeof key === 'string' && key.length > 0 ? key : null,
    status,
  });
  const code = status === 429 ? 'rate_limited' : status === 503 ? 'service_unavailable' : 'internal_error';
  throw new ServiceProblem(code, `injected ${status} on submit (fault injection); no job was created`, {
    ...(status === 500 ? {} : { retryAfterSeconds: faults.submitRetryAfterSeconds }),
  });
}

/**
 * `POST /v1/queue/{model}`: validates, replays an earlier job with the same Idempotency-Key and body,
 * or prices and creates the job (202 with its Generation request).
 */
async function submit(
  ctx: ServiceContext,
  request: FastifyRequest<SubmitRoute>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  ctx.counters.submits++;
  injectSubmitError(ctx, request);

  const modelCheck = validateModelId(request.params.model);
  if (!modelCheck.ok) throw new ServiceProblem('not_found', `unknown model ${request.params.model}`);
  const model: ModelId = modelCheck.value;
  const validation = validateModelInput(model, request.body ?? {}, {
    allowedOrigins: [ctx.publicUrl],
    allowPlainHttp: ctx.allowPrivateWebhooks,
  });
  if (!validation.ok) {
    throw new ServiceProblem('validation_failed', `the input of ${model} is invalid`, { errors: validation.errors });
  }

  const header = request.headers['idempotency-key'];
  const idempotencyKey = typeof header === 'string' && header.length > 0 ? header : null;
  if (idempotencyKey && idempotencyKey.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ServiceProblem('validation_failed', 'Idempotency-Key is too long', {
      errors: [{ path: 'Idempotency-Key', message: `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` }],
    });
  }
  const bodyHash = hashBody({ model, input: request.body ?? {} });
  const existing = idempotencyKey ? ctx.jobs.findIdempotent(idempotencyKey, bodyHash) : null;
  if (existing) return reply.code(202).header('idempotent-replayed', 'true').send(generationRequest(ctx, existing));

  // The clip is fetched once, into the job's input directory: priced and rendered from the same bytes.
  const id = randomUUID();
  let job: JobRecord;
  try {
    const price = await priceOf(ctx.runner, model, validation.value, ctx.inputs.dirOf(id));
    // A concurrent submit with the same key may have created the job while this one was pricing.
    const raced = idempotencyKey ? ctx.jobs.findIdempotent(idempotencyKey, bodyHash) : null;
    if (raced) {
      await ctx.inputs.remove(id);
      return reply.code(202).header('idempotent-replayed', 'true').send(generationRequest(ctx, raced));
    }
    job = ctx.jobs.create(
      id,
      model,
      validation.value,
      price.credits,
      price.billedSeconds,
      idempotencyKey,
      bodyHash,
      request.receivedAt,
    );
  } catch (error) {
    await ctx.inputs.remove(id);
    throw error;
  }
  ctx.counters.jobsCreated++;
  if (chance(ctx.getFaults().dropSubmitResponseRate)) {
    // The job exists and is billed, but the client never hears so: the ambiguous submission.
    journalFault(ctx.store, { kind: 'submit_answer_dropped', requestId: job.id, idempotencyKey });
    request.log.warn({ requestId: job.id }, 'fault injection: submit answer dropped');
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }
  return reply.code(202).send(generationRequest(ctx, job));
}

/** Submit, status, result and cancel. */
export function registerQueueRoutes(app: FastifyInstance, context: () => ServiceContext): void {
  app.post<SubmitRoute>('/v1/queue/:model', async (request, reply) => submit(context(), request, reply));

  app.get<{ Params: { id: string } }>('/v1/queue/requests/:id/status', async (request) => {
    const ctx = context();
    ctx.counters.statusCalls++;
    const job = findJob(ctx, request.params.id);
    return {
      request_id: job.id,
      status: job.status,
      queue_position: ctx.jobs.queuePosition(job),
      ...(job.error && job.status === 'FAILED' ? { error: job.error } : {}),
    };
  });

  app.get<{ Params: { id: string } }>('/v1/queue/requests/:id', async (request) => {
    const ctx = context();
    ctx.counters.resultCalls++;
    const job = findJob(ctx, request.params.id);
    if (job.status !== 'COMPLETED' || !job.result) {
      // Also for FAILED and CANCELLED: there is no result, and `job_status` says why.
      throw new ServiceProblem(
        'result_not_ready',
        `the job is ${job.status}; a result exists only once it is COMPLETED`,
        {
          job_status: job.status,
          request_id: job.id,
          ...(job.error ? { error: job.error } : {}),
        },
      );
    }
    return job.result;
  });

  app.post<{ Params: { id: string } }>('/v1/queue/requests/:id/cancel', async (request, reply) => {
    const ctx = context();
    ctx.counters.cancelCalls++;
    const delayMs = ctx.getFaults().cancelDelayMs;
    const live = ctx.store.state.jobs.get(request.params.id);
    if (delayMs > 0 && live && (live.status === 'IN_QUEUE' || live.status === 'IN_PROGRESS')) {
      // Asynchronous cancel (fault injection): accepted now, effective later; the client must poll.
      journalFault(ctx.store, { kind: 'cancel_delayed', requestId: live.id, idempotencyKey: live.idempotencyKey });
      setTimeout(() => {
        try {
          ctx.jobs.cancel(live.id);
        } catch (error) {
          request.log.info({ requestId: live.id, err: error }, 'delayed cancel found the job no longer live');
        }
      }, delayMs).unref();
      return reply.code(202).send({ request_id: live.id, status: live.status });
    }
    const job = ctx.jobs.cancel(request.params.id);
    return reply.code(202).send({ request_id: job.id, status: job.status });
  });
}
