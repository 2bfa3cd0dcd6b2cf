import { randomUUID } from 'node:crypto';
import { API_VERSION, EVENT_TYPES } from '../../contract';
import type { EndpointRecord, JobRecord } from '../store/records';

/** Event kinds an endpoint can subscribe to; `generation.completed` is the default and the spec's only one. */
export const ENDPOINT_EVENT_TYPES = [EVENT_TYPES.completed, EVENT_TYPES.failed, EVENT_TYPES.cancelled] as const;
export const DEFAULT_ENDPOINT_EVENTS: readonly string[] = [EVENT_TYPES.completed];

/** The event kinds an endpoint receives (the default for endpoints registered without `events`). */
export function endpointEvents(endpoint: EndpointRecord): readonly string[] {
  return endpoint.events ?? DEFAULT_ENDPOINT_EVENTS;
}

export interface BuiltEvent {
  eventId: string;
  eventType: string;
  /** The exact JSON body; the same bytes go out on every attempt. */
  body: string;
}

/** The event kind a terminal job emits. */
export function eventTypeOf(job: JobRecord): string {
  if (job.status === 'COMPLETED' && job.result) return EVENT_TYPES.completed;
  return job.status === 'CANCELLED' ? EVENT_TYPES.cancelled : EVENT_TYPES.failed;
}

/**
 * The webhook event of a terminal job, with every field of the spec's event. `generation.failed`
 * and `generation.cancelled` (not in the spec) carry `status: "ERROR"` / `"CANCELLED"`, a data
 * object without videos and `error: {code, message}`.
 */
export function buildEvent(job: JobRecord): BuiltEvent {
  const eventId = `evt_${randomUUID()}`;
  const common = {
    event_id: eventId,
    api_version: API_VERSION,
    created_at: new Date().toISOString(),
    request_id: job.id,
  };
  let event: Record<string, unknown>;
  if (job.status === 'COMPLETED' && job.result) {
    const videos = Array.isArray(job.result.videos) ? job.result.videos : [];
    event = {
      ...common,
      event_type: EVENT_TYPES.completed,
      status: 'OK',
      data: { ...job.result, gateway_request_id: job.id, output_count: videos.length },
      error: null,
    };
  } else {
    const cancelled = job.status === 'CANCELLED';
    event = {
      ...common,
      event_type: eventTypeOf(job),
      status: cancelled ? 'CANCELLED' : 'ERROR',
      data: {
        request_id: job.id,
        gateway_request_id: job.id,
        status: job.status,
        model: job.model,
        credits_used: 0,
        videos: [],
        output_count: 0,
      },
      error: job.error ?? { code: 'generation_failed', message: 'the generation failed' },
    };
  }
  return { eventId, eventType: String(event.event_type), body: JSON.stringify(event) };
}
