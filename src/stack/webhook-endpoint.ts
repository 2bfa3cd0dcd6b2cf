import { request } from 'undici';
import { StackSetupError } from './errors';
import { EVENT_TYPES } from '../contract';
import { readEndpoint, writeEndpoint, type StatePaths, type StoredEndpoint } from './stack-state';

async function call(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  apiKey: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const response = await request(url, {
    method,
    headers: { authorization: `Key ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.body.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: response.statusCode, json };
}

/**
 * Event kinds the local stack's endpoint receives: completions, and failures and cancels too, so a
 * job the service refuses is known from its event within a second instead of at the first fallback poll.
 */
export const STACK_ENDPOINT_EVENTS: readonly string[] = [
  EVENT_TYPES.completed,
  EVENT_TYPES.failed,
  EVENT_TYPES.cancelled,
];

/**
 * Makes sure the bridge URL is registered as the service's webhook endpoint, once, with
 * STACK_ENDPOINT_EVENTS: a stored endpoint that the service still knows under the same URL and
 * event kinds is reused (its secret is what the bridge verifies with); otherwise the old one is
 * deleted and a new one registered, its secret stored (0600).
 */
export async function ensureWebhookEndpoint(
  paths: StatePaths,
  serviceUrl: string,
  apiKey: string,
  bridgeUrl: string,
): Promise<{ endpoint: StoredEndpoint; created: boolean }> {
  const stored = readEndpoint(paths);
  const listed = await call('GET', `${serviceUrl}/v1/webhooks/endpoints`, apiKey);
  if (listed.status !== 200)
    throw new StackSetupError(`listing webhook endpoints at ${serviceUrl} answered HTTP ${listed.status}`);
  const known = (listed.json as { endpoints?: Array<{ id: string; url: string; events?: string[] }> }).endpoints ?? [];
  const sameEvents = (events: string[] | undefined) =>
    events !== undefined &&
    events.length === STACK_ENDPOINT_EVENTS.length &&
    STACK_ENDPOINT_EVENTS.every((e) => events.includes(e));
  if (
    stored &&
    known.some((e) => e.id === stored.id && e.url === bridgeUrl && sameEvents(e.events)) &&
    stored.url === bridgeUrl
  ) {
    return { endpoint: stored, created: false };
  }
  // A stale registration (other bridge port, a secret we lost, or one made before failure events) is replaced.
  for (const old of known.filter((e) => e.url === bridgeUrl || e.id === stored?.id)) {
    await call('DELETE', `${serviceUrl}/v1/webhooks/endpoints/${old.id}`, apiKey);
  }
  const created = await call('POST', `${serviceUrl}/v1/webhooks/endpoints`, apiKey, {
    url: bridgeUrl,
    events: STACK_ENDPOINT_EVENTS,
  });
  const answer = created.json as { id?: string; secret?: string; detail?: string };
  if (created.status !== 201 || !answer.id || !answer.secret) {
    throw new StackSetupError(
      `registering ${bridgeUrl} as webhook endpoint failed: HTTP ${created.status} ${answer.detail ?? ''}`.trim(),
    );
  }
  const endpoint = { id: answer.id, url: bridgeUrl, secret: answer.secret };
  writeEndpoint(paths, endpoint);
  return { endpoint, created: true };
}
