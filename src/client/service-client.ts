import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  cancelResponseSchema,
  generationRequestSchema,
  problemSchema,
  quoteResponseSchema,
  resultSchema,
  statusResponseSchema,
  toFieldErrors,
  type ModelId,
  type ModelInputs,
} from '../contract';
import {
  AmbiguousSubmissionError,
  ServiceClientError,
  ServiceProblemError,
  ServiceTimeoutError,
  ServiceUnreachableError,
  UnexpectedResponseError,
} from './errors';
import { DEFAULT_RETRY, DEFAULT_SUBMIT_RETRY, MAX_RETRY_AFTER_MS, backoffDelayMs, parseRetryAfterMs, resolveRule } from './retry';
import type { CallKind, RetryRule, ServiceClient, ServiceClientOptions } from './types';

/** Socket errors that prove the request never reached the service. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Problem codes by which the service says a submit was not accepted. */
const NOT_ACCEPTED_PROBLEM_CODES = new Set(['rate_limited', 'service_unavailable']);
const DEFAULT_TIMEOUT_MS = 30_000;
/** Largest response body read; results are small JSON documents. */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

interface CallSpec<T> {
  kind: CallKind;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  schema: z.ZodType<T>;
}

/**
 * Creates the typed HTTP client of the service (undici).
 * Idempotent calls are retried with exponential backoff and jitter honouring Retry-After;
 * a submit is retried only where the request provably was not accepted.
 */
export function createServiceClient(options: ServiceClientOptions): ServiceClient & { close(): Promise<void> } {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const authorization = `${options.authScheme ?? 'Key'} ${options.apiKey}`;
  const retryRule = resolveRule(DEFAULT_RETRY, options.retry);
  const submitRule = resolveRule(DEFAULT_SUBMIT_RETRY, options.submitRetry);
  const dispatcher = new Agent({
    connect: { timeout: Math.min(timeoutMs, 10_000) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  async function once<T>(spec: CallSpec<T>): Promise<T> {
    options.onRequest?.(spec.kind);
    let response: Dispatcher.ResponseData;
    try {
      response = await request(spec.url, {
        method: spec.method,
        dispatcher,
        headers: {
          authorization,
          accept: 'application/json, application/problem+json',
          ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...spec.headers,
        },
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw classifyTransportError(error, spec);
    }
    let text: string;
    try {
      text = await readLimited(response.body);
    } catch (error) {
      // The service answered (a status line arrived) but the body was lost: for a submit the
      // job may exist, so this is ambiguous too.
      throw classifyTransportError(error, spec);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) {
      return parseBody(text, spec.schema, spec);
    }
    throw toProblemError(response.statusCode, response.headers, text);
  }

  async function withRetries<T>(spec: CallSpec<T>, rule: RetryRule, shouldRetry: (error: ServiceClientError) => boolean): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await once(spec);
      } catch (error) {
        if (!(error instanceof ServiceClientError) || attempt >= rule.maxAttempts || !shouldRetry(error)) throw error;
        const retryAfterMs = error instanceof ServiceProblemError && error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : undefined;
        if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_AFTER_MS) throw error;
        await sleep(backoffDelayMs(rule, attempt, retryAfterMs));
      }
    }
  }

  const idempotent = <T>(spec: CallSpec<T>) => withRetries(spec, retryRule, (error) => error.retryable);
  const requestUrl = (requestId: string, suffix = '') => `${baseUrl}/v1/queue/requests/${encodeURIComponent(requestId)}${suffix}`;

  return {
    submit<M extends ModelId>(model: M, input: ModelInputs[M], submitOptions: { idempotencyKey?: string } = {}) {
      const spec: CallSpec<z.infer<typeof generationRequestSchema>> = {
        kind: 'submit',
        method: 'POST',
        url: `${baseUrl}/v1/queue/${encodeURIComponent(model)}`,
        body: input,
        headers: submitOptions.idempotencyKey ? { 'idempotency-key': submitOptions.idempotencyKey } : {},
        schema: generationRequestSchema,
      };
      return withRetries(spec, submitRule, provablyNotAccepted);
    },
    status(requestId, statusOptions = {}) {
      return idempotent({ kind: 'status', method: 'GET', url: statusOptions.statusUrl ?? requestUrl(requestId, '/status'), schema: statusResponseSchema });
    },
    result(requestId, resultOptions = {}) {
      return idempotent({ kind: 'result', method: 'GET', url: resultOptions.responseUrl ?? requestUrl(requestId), schema: resultSchema });
    },
    cancel(requestId, cancelOptions = {}) {
      // Cancelling twice is harmless: the second answer reports the state reached.
      return idempotent({
        kind: 'cancel',
        method: options.cancelMethod ?? 'POST',
        url: cancelOptions.cancelUrl ?? requestUrl(requestId, '/cancel'),
        schema: cancelResponseSchema,
      });
    },
    quote<M extends ModelId>(model: M, input: ModelInputs[M]) {
      return idempotent({ kind: 'quote', method: 'POST', url: `${baseUrl}/v1/pricing/quote`, body: { model, input }, schema: quoteResponseSchema });
    },
    close: () => dispatcher.close(),
  };
}

function idempotencyHint(key: string | undefined): string {
  return key
    ? `; look it up by Idempotency-Key ${key} (resubmitting with the same key returns the original job)`
    : '; check the account for a job created at this time before submitting again';
}

/** A submit is retried only when the service cannot have accepted it. */
function provablyNotAccepted(error: ServiceClientError): boolean {
  if (error instanceof ServiceUnreachableError) return true;
  if (error instanceof ServiceProblemError) return error.status === 429 || NOT_ACCEPTED_PROBLEM_CODES.has(error.code);
  return false;
}

function classifyTransportError(error: unknown, spec: CallSpec<unknown>): ServiceClientError {
  const code = errorCode(error);
  const target = new URL(spec.url);
  const where = `${spec.method} ${target.origin}${target.pathname}`;
  if (code && NOT_SENT_CODES.has(code)) {
    return new ServiceUnreachableError(`cannot reach the service at ${target.origin} (${code}); is it running, and is the base URL right?`, code);
  }
  if (spec.kind === 'submit') {
    return new AmbiguousSubmissionError(
      `submit (${where}) was sent but no answer came back (${code ?? describe(error)}); the job may exist and be billed` +
        idempotencyHint(spec.headers?.['idempotency-key']),
      spec.headers?.['idempotency-key'],
    );
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || isAbort(error)) {
    return new ServiceTimeoutError(`${where} timed out`);
  }
  // The connection dropped mid-call; an idempotent call can simply be made again.
  return new ServiceTimeoutError(`${where} failed: ${code ?? describe(error)}`);
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function readLimited(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      throw Object.assign(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`), { code: 'RESPONSE_TOO_LARGE' });
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody<T>(text: string, schema: z.ZodType<T>, spec: CallSpec<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UnexpectedResponseError(`${spec.kind}: the service answered with a body that is not JSON`, []);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const errors = toFieldErrors(parsed.error);
    throw new UnexpectedResponseError(`${spec.kind}: the answer does not match the contract (${errors.map((e) => `${e.path}: ${e.message}`).join('; ')})`, errors);
  }
  return parsed.data;
}

function toProblemError(status: number, headers: Dispatcher.ResponseData['headers'], text: string): ServiceProblemError {
  const retryAfterHeader = headers['retry-after'];
  const retryAfterMs = parseRetryAfterMs(Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader);
  const retryAfterSeconds = retryAfterMs === undefined ? undefined : retryAfterMs / 1000;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const problem = problemSchema.safeParse(json);
  if (!problem.success) {
    return new ServiceProblemError(status, `http_${status}`, `the service answered HTTP ${status} without a problem document`, [], retryAfterSeconds);
  }
  const { code, title, detail, errors, job_status: jobStatus } = problem.data;
  const message = [title, detail].filter(Boolean).join(': ') || `HTTP ${status}`;
  return new ServiceProblemError(status, code, `${message} (${code})`, errors ?? [], retryAfterSeconds, jobStatus);
}
