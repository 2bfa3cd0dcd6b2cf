import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookEvent } from '../contract';
import { WebhookReceiverOptionsError } from './errors';
import { verifyWebhook, type WebhookFailureReason } from './verify-webhook';

/** The largest body a receiver reads unless told otherwise (the bridge's default too): 1 MiB. */
export const DEFAULT_RECEIVER_BODY_LIMIT = 1024 * 1024;

/** What one delivery came to; `onOutcome` hears each (logging, metrics). Never carries a secret. */
export type ReceiverOutcome =
  | { outcome: 'accepted'; event: WebhookEvent }
  | { outcome: 'rejected'; reason: WebhookFailureReason }
  | { outcome: 'too_large'; limitBytes: number }
  | { outcome: 'unavailable'; event: WebhookEvent; error: unknown }
  | { outcome: 'no_raw_body' };

/** Options of `createWebhookReceiver`. */
export interface WebhookReceiverOptions {
  /** Signing secrets; several during a rotation. At least one, none empty. */
  secrets: string | readonly string[];
  /**
   * Called with each verified event; the delivery is answered 202 once it resolves, 503 (the service
   * retries) when it rejects. To wake the workflow waiting for the job, hand the event to the bridge's
   * sink: `onEvent: (event) => sink.deliver(event)` with `startInboxSink` from `reelflow/bridge`.
   */
  onEvent: (event: WebhookEvent) => void | Promise<void>;
  /** Largest accepted body in bytes (413 beyond). Default 1 MiB. */
  bodyLimit?: number;
  /** Allowed clock difference in seconds. Default: the contract's 300. */
  toleranceSeconds?: number;
  /** Told how each delivery ended. */
  onOutcome?: (outcome: ReceiverOutcome) => void;
}

/** A request as node:http hands it over, or as Express does (which may have read the body into `body`). */
export type ReceiverRequest = IncomingMessage & { body?: unknown };

/**
 * A request handler for node:http (`http.createServer(receiver)`) and Express (`app.post('/webhooks', receiver)`,
 * also after `express.raw()`). `next` is accepted and never called: every request is answered.
 */
export type WebhookReceiver = (request: ReceiverRequest, response: ServerResponse, next?: unknown) => void;

const PROBLEM_TYPE = 'application/problem+json';

function send(response: ServerResponse, status: number, body?: object, headers: Record<string, string> = {}): void {
  if (response.headersSent) return;
  const text = body === undefined ? '' : JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    ...(body === undefined ? {} : { 'content-type': status < 400 ? 'application/json' : PROBLEM_TYPE }),
    'content-length': String(Buffer.byteLength(text)),
  });
  response.end(text);
}

function problem(status: number, code: string, title: string, extra: Record<string, unknown> = {}) {
  return { type: 'about:blank', title, status, code, ...extra };
}

/** Reads the raw body: Express's `express.raw()` result when there, the stream otherwise. Null: over the limit. */
function readRawBody(request: ReceiverRequest, limit: number): Promise<Buffer | null | 'consumed'> {
  if (Buffer.isBuffer(request.body)) return Promise.resolve(request.body.length > limit ? null : request.body);
  if (typeof request.body === 'string') {
    const bytes = Buffer.from(request.body, 'utf8');
    return Promise.resolve(bytes.length > limit ? null : bytes);
  }
  // A body parser ran before us (express.json(), …): the signed bytes are gone.
  if (request.readableEnded || request.body !== undefined) return Promise.resolve('consumed');
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    return Promise.resolve(null);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      // Keep reading (and dropping) past the limit, so the client gets the 413 instead of a reset.
      if (!over) chunks.push(chunk);
    });
    request.once('end', () => resolve(over ? null : Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

/**
 * Builds the webhook receiver as a plain request handler, for node:http or Express: reads the raw
 * body, verifies it with `verifyWebhook`, hands the event to `onEvent` and answers as the bridge does —
 * 202 `{ accepted, event_id }` once `onEvent` resolved, 401 with an empty body for a bad signature,
 * 400 for a well-signed body that is not an event, 413 past `bodyLimit`, 503 (retry-after 1) when
 * `onEvent` fails, 405 for a method other than POST, 500 when a body parser consumed the raw bytes.
 * Bad options throw `WebhookReceiverOptionsError` here, naming the option.
 */
export function createWebhookReceiver(options: WebhookReceiverOptions): WebhookReceiver {
  const secrets = typeof options.secrets === 'string' ? [options.secrets] : [...(options.secrets ?? [])];
  if (secrets.length === 0 || secrets.some((secret) => typeof secret !== 'string' || secret.length === 0))
    throw new WebhookReceiverOptionsError('secrets: at least one signing secret is required, and none may be empty');
  if (typeof options.onEvent !== 'function')
    throw new WebhookReceiverOptionsError('onEvent: a function receiving each verified event is required');
  const bodyLimit = options.bodyLimit ?? DEFAULT_RECEIVER_BODY_LIMIT;
  if (!Number.isInteger(bodyLimit) || bodyLimit <= 0)
    throw new WebhookReceiverOptionsError(
      `bodyLimit: must be a positive whole number of bytes, got ${String(bodyLimit)}`,
    );
  const tell = (outcome: ReceiverOutcome) => {
    try {
      options.onOutcome?.(outcome);
    } catch {
      // An observer's failure never changes the answer to the sender.
    }
  };

  const handle = async (request: ReceiverRequest, response: ServerResponse): Promise<void> => {
    if (request.method !== 'POST') {
      request.resume();
      return send(response, 405, problem(405, 'method_not_allowed', 'Method Not Allowed'), { allow: 'POST' });
    }
    const raw = await readRawBody(request, bodyLimit);
    if (raw === 'consumed') {
      tell({ outcome: 'no_raw_body' });
      return send(
        response,
        500,
        problem(500, 'raw_body_unavailable', 'Raw Body Unavailable', {
          detail: 'a body parser read the request first; mount the receiver before it, or behind express.raw()',
        }),
      );
    }
    if (raw === null) {
      tell({ outcome: 'too_large', limitBytes: bodyLimit });
      return send(response, 413, problem(413, 'payload_too_large', 'Payload Too Large', { limit_bytes: bodyLimit }));
    }
    const verdict = verifyWebhook({
      headers: request.headers,
      rawBody: raw,
      secrets,
      ...(options.toleranceSeconds !== undefined ? { toleranceSeconds: options.toleranceSeconds } : {}),
    });
    if (!verdict.ok) {
      tell({ outcome: 'rejected', reason: verdict.reason });
      if (verdict.reason === 'malformed_event')
        return send(response, 400, problem(400, 'malformed_event', 'Malformed Event', { errors: verdict.errors }));
      // Empty body: a forger learns nothing about why.
      return send(response, 401);
    }
    try {
      await options.onEvent(verdict.event);
    } catch (error) {
      tell({ outcome: 'unavailable', event: verdict.event, error });
      return send(response, 503, problem(503, 'service_unavailable', 'Service Unavailable'), { 'retry-after': '1' });
    }
    tell({ outcome: 'accepted', event: verdict.event });
    send(response, 202, { accepted: true, event_id: verdict.event.event_id });
  };

  return (request, response) => {
    handle(request, response).catch(() => send(response, 500, problem(500, 'internal_error', 'Internal Server Error')));
  };
}
