import type { FastifyInstance } from 'fastify';
import { quoteRequestSchema, toFieldErrors, validateModelInput } from '../../contract';
import type { ServiceContext } from '../context';
import { ServiceProblem } from '../http/errors';
import { priceOf } from '../queue/pricing';

/** `POST /v1/pricing/quote` with `{model, input}`: the price the submit would charge. */
export function registerPricingRoutes(app: FastifyInstance, context: () => ServiceContext): void {
  app.post<{ Body: unknown }>('/v1/pricing/quote', async (request) => {
    const ctx = context();
    ctx.counters.quoteCalls++;
    const parsed = quoteRequestSchema.safeParse(request.body ?? {});
    if (!parsed.success)
      throw new ServiceProblem('validation_failed', 'the quote request is invalid', {
        errors: toFieldErrors(parsed.error),
      });
    const { model, input } = parsed.data;
    const validation = validateModelInput(model, input, {
      allowedOrigins: [ctx.publicUrl],
      allowPlainHttp: ctx.allowPrivateWebhooks,
    });
    if (!validation.ok) {
      throw new ServiceProblem('validation_failed', `the input of ${model} is invalid`, {
        errors: validation.errors.map((e) => ({ ...e, path: e.path === '(root)' ? 'input' : `input.${e.path}` })),
      });
    }
    // Admitted only now: a malformed quote costs nothing, a real one may download a large file.
    const release = ctx.quotes.admit(request.apiKeyId ?? 'anonymous');
    let price;
    try {
      price = await priceOf(ctx.runner, model, validation.value);
    } finally {
      release();
    }
    return { model, credits: price.credits, pricing_unit: price.pricingUnit, billed_seconds: price.billedSeconds };
  });
}
