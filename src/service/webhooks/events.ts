import { randomUUID } from 'node:crypto';
import { API_VERSION, EVENT_TYPES } from '../../contract';
import type { JobRecord } from '../store/records';

export interface BuiltEvent {
  eventId: string;
  eventType: string;
  /** The exact JSON body; the same bytes go out on every attempt. */
  body: string;
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
      event_type: cancelled ? EVENT_TYPES.cancelled : EVENT_TYPES.failed,
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
