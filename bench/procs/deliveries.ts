/**
 * Webhook load generator, its own process: sends one signed `generation.completed` delivery per
 * request id to a bridge, `concurrency` in flight, serialised and signed just before sending (as the
 * service does), starting at `startAt` (so several generators start together).
 *   node -r tsx/cjs bench/procs/deliveries.ts <config.json> <result.json>
 */
import * as fs from 'node:fs';
import { Pool } from 'undici';
import type { WebhookEvent } from '../../src/contract';
import { signedHeaders } from '../../src/contract/signature';
import { makeEvent } from '../../test/integration/bridge-fixtures';

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

/** The bridge tests' completion event for `requestId`, its output on the service's origin. */
function completedEvent(requestId: string, fileOrigin: string): WebhookEvent {
  const event = makeEvent({ request_id: requestId });
  const fileName = `long-form-${requestId}.mp4`;
  return {
    ...event,
    data: {
      ...event.data,
      model: 'service-video-cinema-long-form-from-references',
      videos: [{ url: `${fileOrigin}/files/${requestId}/${fileName}`, file_name: fileName, content_type: 'video/mp4' }],
    },
  } as WebhookEvent;
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
          ...signedHeaders({
            id: event.event_id,
            timestamp: Math.floor(Date.now() / 1000),
            body,
            secrets: [config.secret],
            eventType: event.event_type,
          }),
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
