/**
 * Webhook load generator, its own process: sends one signed `generation.completed` delivery per
 * request id to a bridge, `concurrency` in flight, serialised and signed just before sending (as the
 * service does), starting at `startAt` (so several generators start together).
 *   node -r tsx/cjs bench/procs/deliveries.ts <config.json> <result.json>
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { Pool } from 'undici';
import { API_VERSION, EVENT_TYPES, type WebhookEvent } from '../../src/contract';
import { signedHeaders } from '../../src/contract/signature';

export interface DeliveriesConfig {
  url: string;
  secret: string;
  requestIds: string[];
  /** Origin of the output URLs in the events (the service's). */
  fileOrigin: string;
  concurrency: number;
  startAt: number;
}

export interface DeliveriesResult {
  startedAt: number;
  endedAt: number;
  /** Request id → when its delivery was sent (ms since the epoch). */
  sentAt: Record<string, number>;
  answerMs: number[];
  non202: number;
}

function completedEvent(requestId: string, fileOrigin: string): WebhookEvent {
  return {
    event_id: `evt-${randomUUID()}`,
    event_type: EVENT_TYPES.completed,
    api_version: API_VERSION,
    created_at: new Date().toISOString(),
    request_id: requestId,
    status: 'OK',
    data: {
      request_id: requestId,
      gateway_request_id: requestId,
      status: 'COMPLETED',
      model: 'service-video-cinema-long-form-from-references',
      credits_used: 100,
      videos: [{ url: `${fileOrigin}/files/${requestId}/long-form-${requestId}.mp4`, file_name: `long-form-${requestId}.mp4`, content_type: 'video/mp4' }],
      output_count: 1,
    },
    error: null,
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as DeliveriesConfig;
  const target = new URL(config.url);
  const pool = new Pool(target.origin, { connections: config.concurrency });
  const sentAt: Record<string, number> = {};
  const answerMs: number[] = [];
  let non202 = 0;
  let next = 0;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, config.startAt - Date.now())));
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: Math.min(config.concurrency, config.requestIds.length) }, async () => {
      while (next < config.requestIds.length) {
        const requestId = config.requestIds[next++]!;
        const event = completedEvent(requestId, config.fileOrigin);
        const body = JSON.stringify(event);
        const headers = {
          'content-type': 'application/json',
          ...signedHeaders({ id: event.event_id, timestamp: Math.floor(Date.now() / 1000), body, secrets: [config.secret], eventType: event.event_type }),
        };
        const t0 = performance.now();
        sentAt[requestId] = Date.now();
        const response = await pool.request({ path: target.pathname, method: 'POST', body, headers });
        await response.body.dump();
        if (response.statusCode !== 202) non202 += 1;
        answerMs.push(performance.now() - t0);
      }
    }),
  );
  const result: DeliveriesResult = { startedAt, endedAt: Date.now(), sentAt, answerMs, non202 };
  fs.writeFileSync(process.argv[3]!, JSON.stringify(result));
  await pool.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
