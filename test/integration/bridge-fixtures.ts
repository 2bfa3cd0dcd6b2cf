import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { request } from 'undici';
import pino, { type Logger } from 'pino';
import { API_VERSION, EVENT_TYPES, type WebhookEvent } from '../../src/contract';
import { signedHeaders } from '../../src/contract/signature';
import type { Client } from '@temporalio/client';
import { createRouteSubscriber, subscribeToRoute, type RouteStore } from '../../src/routing';
import type { TestSubscribeActivities } from './bridge.workflows';

/** Shared pieces of the bridge tests: events, signed deliveries over real HTTP, captured logs. */

export function makeEvent(overrides: Partial<WebhookEvent> = {}): WebhookEvent {
  const requestId = overrides.request_id ?? `req-${randomUUID()}`;
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
      model: 'service-upscale-video-fast',
      credits_used: null,
      videos: [
        { url: `https://files.example.test/${requestId}/out.mp4`, file_name: 'out.mp4', content_type: 'video/mp4' },
      ],
      output_count: 1,
    },
    error: null,
    ...overrides,
  };
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Headers the service would send for `body`, signed with every secret given. */
export function signFor(
  body: string | Buffer,
  options: { id: string; secrets: string[]; timestamp?: number; eventType?: string },
): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...signedHeaders({
      id: options.id,
      timestamp: options.timestamp ?? nowSeconds(),
      body,
      secrets: options.secrets,
      eventType: options.eventType ?? EVENT_TYPES.completed,
    }),
  };
}

export interface Answer {
  status: number;
  text: string;
}

/** One POST over real HTTP. */
export async function post(url: string, body: string | Buffer, headers: Record<string, string>): Promise<Answer> {
  const response = await request(url, { method: 'POST', body, headers });
  return { status: response.statusCode, text: await response.body.text() };
}

/** A signed delivery of `event` (serialised once, as the service does). */
export async function deliver(
  url: string,
  event: WebhookEvent,
  secrets: string[],
  timestamp?: number,
): Promise<Answer> {
  const body = JSON.stringify(event);
  return post(
    url,
    body,
    signFor(body, { id: event.event_id, secrets, ...(timestamp !== undefined ? { timestamp } : {}) }),
  );
}

/** A pino logger writing JSON lines into memory, to check what the bridge logs. */
export function captureLogs(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

export function quietBundlerLogger() {
  const noop = () => undefined;
  return { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };
}

/** The activity a worker running bridge.workflows registers: the pipeline's way of subscribing (a row in `store`). */
export function testSubscriberActivities(store: RouteStore): TestSubscribeActivities {
  const subscriber = createRouteSubscriber(store);
  return { subscribeRoute: (requestId, workflowId) => subscriber.subscribe(requestId, workflowId) };
}

/** The same activity as builds before the route store had it: through a route workflow (pinned older pipelines). */
export function routeWorkflowSubscriberActivities(
  client: Client,
  taskQueue: string,
  lifetimes: { ttlMs?: number } = {},
): TestSubscribeActivities {
  return {
    subscribeRoute: (requestId, subscriber) =>
      subscribeToRoute(
        { client, taskQueue, ...(lifetimes.ttlMs !== undefined ? { ttlMs: lifetimes.ttlMs } : {}) },
        requestId,
        subscriber,
      ),
  };
}
