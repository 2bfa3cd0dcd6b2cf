import { isTerminalState, type JobState } from './limits';
import type { JobResult, WebhookEvent } from './resources';

/**
 * Webhook event helpers as plain code (no schemas), so workflows can use them without zod. The
 * bridge validates every event with `webhookEventSchema` before it reaches a workflow; these
 * functions only read the validated fields.
 */

export const API_VERSION = '2025-01-01';

/** Event kinds. Only `generation.completed` is in the spec; the others are opt-in on the local service. */
export const EVENT_TYPES = {
  completed: 'generation.completed',
  failed: 'generation.failed',
  cancelled: 'generation.cancelled',
} as const;

/** The terminal state an event reports, or null for an event that says nothing terminal. */
export function terminalStateOf(event: WebhookEvent): JobState | null {
  if (event.event_type === EVENT_TYPES.completed) return 'COMPLETED';
  if (event.event_type === EVENT_TYPES.failed) return 'FAILED';
  if (event.event_type === EVENT_TYPES.cancelled) return 'CANCELLED';
  const status = event.data?.status;
  return status !== undefined && isTerminalState(status) ? status : null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Same rules as `outputVideoSchema`. */
function isOutputVideo(value: unknown): boolean {
  return (
    isObject(value) &&
    typeof value.url === 'string' &&
    value.url.length > 0 &&
    typeof value.file_name === 'string' &&
    typeof value.content_type === 'string'
  );
}

/**
 * The result a completed event carries: the spec makes `data` "the result object" plus
 * `gateway_request_id` and `output_count`. Undefined unless it is a whole one (the model, the
 * charge, at least one video, `output_count` matching, the event's own request id), so a caller
 * that gets undefined fetches the result instead. Checks the same fields as `resultSchema`, by hand.
 */
export function resultFromEvent(event: WebhookEvent): JobResult | undefined {
  if (event.event_type !== EVENT_TYPES.completed || !isObject(event.data)) return undefined;
  const { gateway_request_id: _gateway, output_count: outputCount, ...data } = event.data;
  const result: Record<string, unknown> = { request_id: event.request_id, ...data };
  if (result.request_id !== event.request_id || result.status !== 'COMPLETED' || typeof result.model !== 'string')
    return undefined;
  const credits = result.credits_used;
  if (!(credits === null || (typeof credits === 'number' && Number.isInteger(credits)))) return undefined;
  const timings = result.timings;
  if (
    timings !== undefined &&
    !(isObject(timings) && (timings.inference_seconds === undefined || typeof timings.inference_seconds === 'number'))
  )
    return undefined;
  const videos = result.videos;
  if (!Array.isArray(videos) || videos.length === 0 || !videos.every(isOutputVideo)) return undefined;
  if (outputCount !== undefined && outputCount !== videos.length) return undefined;
  return result as JobResult;
}
