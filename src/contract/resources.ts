import { z } from 'zod';
import { JOB_STATES } from './limits';
import { modelIdSchema } from './model-inputs';

export const jobStateSchema = z.enum(JOB_STATES);

/** Returned by submit (HTTP 202). Clients follow the URLs as given. */
export const generationRequestSchema = z.looseObject({
  request_id: z.string().min(1),
  status: jobStateSchema,
  model: z.string(),
  status_url: z.url(),
  response_url: z.url(),
  cancel_url: z.url(),
});
export type GenerationRequest = z.infer<typeof generationRequestSchema>;

/**
 * Status response. The spec shows only `status`; the other fields are the local service's
 * (decided in docs/spec-decisions.md) and optional so the real service still parses.
 */
export const statusResponseSchema = z.looseObject({
  status: jobStateSchema,
  request_id: z.string().optional(),
  queue_position: z.number().int().nonnegative().nullable().optional(),
});
export type StatusResponse = z.infer<typeof statusResponseSchema>;

export const outputVideoSchema = z.looseObject({
  url: z.string().min(1),
  file_name: z.string(),
  content_type: z.string(),
});
export type OutputVideo = z.infer<typeof outputVideoSchema>;

/** Result of a COMPLETED job (the spec gives no formal schema, so unknown fields pass through). */
export const resultSchema = z.looseObject({
  request_id: z.string(),
  status: jobStateSchema,
  model: z.string(),
  credits_used: z.number().int().nullable(),
  timings: z.looseObject({ inference_seconds: z.number().optional() }).optional(),
  videos: z.array(outputVideoSchema),
});
export type JobResult = z.infer<typeof resultSchema>;

/** `error` of a webhook event for a failed job (not shown in the spec; decided). */
export const eventErrorSchema = z.looseObject({ code: z.string(), message: z.string() });

/** Body of a webhook delivery. */
export const webhookEventSchema = z.looseObject({
  event_id: z.string().min(1),
  event_type: z.string().min(1),
  api_version: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be YYYY-MM-DD'),
  created_at: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'must be ISO 8601 UTC with milliseconds'),
  request_id: z.string().min(1),
  status: z.string(),
  data: z
    .looseObject({
      request_id: z.string().optional(),
      gateway_request_id: z.string().optional(),
      status: jobStateSchema.optional(),
      model: z.string().optional(),
      credits_used: z.number().int().nullable().optional(),
      videos: z.array(outputVideoSchema).optional(),
      output_count: z.number().int().nonnegative().optional(),
    })
    .nullable(),
  error: eventErrorSchema.nullable(),
});
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/**
 * Stable machine-readable codes of problem documents. The spec says a code exists but not its
 * values; these are the local service's and the client maps them to typed errors.
 */
export const PROBLEM_CODES = {
  unauthorized: 401,
  insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  result_not_ready: 409,
  cancel_too_late: 409,
  idempotency_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  input_fetch_failed: 422,
  webhook_url_refused: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;
export type ProblemCode = keyof typeof PROBLEM_CODES;

/** RFC 9457 problem document plus `code` and, for validation, field errors. */
export const problemSchema = z.looseObject({
  type: z.string().optional(),
  title: z.string().optional(),
  status: z.number().int().optional(),
  detail: z.string().optional(),
  instance: z.string().optional(),
  code: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  /** For `result_not_ready` and `cancel_too_late`: the job's state. */
  job_status: jobStateSchema.optional(),
});

/** Quote request (decided: the model is named in the body, beside the same input as submit). */
export const quoteRequestSchema = z.object({ model: modelIdSchema, input: z.record(z.string(), z.unknown()) });

export const quoteResponseSchema = z.looseObject({
  model: z.string(),
  credits: z.number().int().nonnegative(),
  pricing_unit: z.enum(['per-output-second', 'per-request']),
  /** Output seconds the price is based on (per-second models). */
  billed_seconds: z.number().nonnegative().nullable().optional(),
});
export type QuoteResponse = z.infer<typeof quoteResponseSchema>;

/** Cancel response (decided: POST, 202 with the job's state at the time). */
export const cancelResponseSchema = z.looseObject({
  request_id: z.string(),
  status: jobStateSchema,
});
export type CancelResponse = z.infer<typeof cancelResponseSchema>;
