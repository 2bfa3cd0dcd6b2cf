import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  accountLedgerSchema,
  keyLookupSchema,
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
  isMissingRoute,
  ServiceClientError,
  ServiceProblemError,
  ServiceTimeoutError,
  ServiceUnreachableError,
  SubmitAnswerInvalidError,
  UnexpectedResponseError,
} from './errors';
import { EXHAUSTED_RETRY_ACTION, submitAction, type IdempotencySetting, type SubmitFailureKind } from './submit-policy';
import {
  DEFAULT_RETRY,
  DEFAULT_SUBMIT_RETRY,
  MAX_RETRY_AFTER_MS,
  backoffDelayMs,
  parseRetryAfterMs,
  resolveRule,
} from './retry';
import type { CallKind, RetryRule, ServiceClient, ServiceClientOptions } from './types';
import { serviceCallAttributes, serviceCallSpanName } from './call-span';
import { inSpan, tracingOn } from '../tracing';

/** Socket errors that prove the request never reached the service. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** Problem codes by which the service says a submit was not accepted. */
const NOT_ACCEPTED_PROBLEM_CODES = new Set(['rate_limited', 'service_unavailable']);
const DEFAULT_TIMEOUT_MS = 30_000;
/** Largest response body read; results are small JSON documents. */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

interface CallSpec<T> {
  /** Account reads (ledger, key lookup) are not counted by `onRequest`. */
  kind: CallKind | 'ledger' | 'lookup';
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  schema: z.ZodType<T>;
  /** Aborts the call and any backoff before the next attempt (activity cancellation, its deadline). */
  signal?: AbortSignal;
  /** A submit's tries, when fewer than its rule's. */
  attempts?: number;
}

/** What one call needs besides its spec: the client's connection pool and settings. */
interface Connection {
  readonly dispatcher: Agent;
  readonly authorization: string;
  readonly timeoutMs: number;
  readonly options: ServiceClientOptions;
}

/** The three ways the client's methods call the service. */
interface Calls {
  readonly baseUrl: string;
  /** A call that may be made again: retried under the client's retry rule. */
  idempotent: <T>(spec: CallSpec<T>) => Promise<T>;
  /** A submit under SUBMIT_POLICY (submitWithPolicy). */
  submit: <T>(spec: CallSpec<T>) => Promise<T>;
  /** The URL of a request, or of one of its sub-resources (`suffix`). */
  requestUrl: (requestId: string, suffix?: string) => string;
}

/**
 * Creates the typed HTTP client of the service (undici).
 * Idempotent calls are retried with exponential backoff and jitter honouring Retry-After;
 * a submit follows SUBMIT_POLICY (src/client/submit-policy.ts) for the `idempotency` setting.
 */
export function createServiceClient(options: ServiceClientOptions): ServiceClient & { close(): Promise<void> } {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retryRule = resolveRule(DEFAULT_RETRY, options.retry);
  const submitRule = resolveRule(DEFAULT_SUBMIT_RETRY, options.submitRetry);
  const idempotency: IdempotencySetting = options.idempotency ?? 'unknown';
  const connection: Connection = {
    dispatcher: new Agent({
      connect: { timeout: Math.min(timeoutMs, 10_000) },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    }),
    authorization: `${options.authScheme ?? 'Key'} ${options.apiKey}`,
    timeoutMs,
    options,
  };
  const once = <T>(spec: CallSpec<T>) => callOnce(connection, spec);
  const calls: Calls = {
    baseUrl,
    idempotent: (spec) => withRetries(once, spec, retryRule, (error) => error.retryable),
    submit: (spec) =>
      submitWithPolicy(
        once,
        spec,
        spec.attempts ? { ...submitRule, maxAttempts: Math.min(submitRule.maxAttempts, spec.attempts) } : submitRule,
        idempotency,
      ),
    requestUrl: (requestId, suffix = '') => `${baseUrl}/v1/queue/requests/${encodeURIComponent(requestId)}${suffix}`,
  };
  return {
    idempotency,
    ...jobCalls(calls, options.cancelMethod),
    ...accountCalls(calls),
    close: () => connection.dispatcher.close(),
  };
}

/** Submit, status, result, cancel and quote. */
function jobCalls(
  calls: Calls,
  cancelMethod: ServiceClientOptions['cancelMethod'],
): Pick<ServiceClient, 'submit' | 'status' | 'result' | 'cancel' | 'quote'> {
  return {
    submit<M extends ModelId>(
      model: M,
      input: ModelInputs[M],
      submitOptions: { idempotencyKey?: string; signal?: AbortSignal; attempts?: number } = {},
    ) {
      const spec: CallSpec<z.infer<typeof generationRequestSchema>> = {
        kind: 'submit',
        method: 'POST',
        url: `${calls.baseUrl}/v1/queue/${encodeURIComponent(model)}`,
        body: input,
        headers: submitOptions.idempotencyKey ? { 'idempotency-key': submitOptions.idempotencyKey } : {},
        schema: generationRequestSchema,
        ...(submitOptions.signal ? { signal: submitOptions.signal } : {}),
        ...(submitOptions.attempts ? { attempts: submitOptions.attempts } : {}),
      };
      return calls.submit(spec);
    },
    status(requestId, statusOptions = {}) {
      return calls.idempotent({
        kind: 'status',
        method: 'GET',
        url: statusOptions.statusUrl ?? calls.requestUrl(requestId, '/status'),
        schema: statusResponseSchema,
      });
    },
    result(requestId, resultOptions = {}) {
      return calls.idempotent({
        kind: 'result',
        method: 'GET',
        url: resultOptions.responseUrl ?? calls.requestUrl(requestId),
        schema: resultSchema,
      });
    },
    cancel(requestId, cancelOptions = {}) {
      // Cancelling twice is harmless: the second answer reports the state reached.
      return calls.idempotent({
        kind: 'cancel',
        method: cancelMethod ?? 'POST',
        url: cancelOptions.cancelUrl ?? calls.requestUrl(requestId, '/cancel'),
        schema: cancelResponseSchema,
      });
    },
    quote<M extends ModelId>(model: M, input: ModelInputs[M]) {
      return calls.idempotent({
        kind: 'quote',
        method: 'POST',
        url: `${calls.baseUrl}/v1/pricing/quote`,
        body: { model, input },
        schema: quoteResponseSchema,
      });
    },
  };
}

/** The local service's account extensions (ledger, lookup by key): null where a service has none. */
function accountCalls(calls: Calls): Pick<ServiceClient, 'ledger' | 'lookupKey'> {
  return {
    async ledger() {
      try {
        return await calls.idempotent({
          kind: 'ledger',
          method: 'GET',
          url: `${calls.baseUrl}/v1/account/ledger`,
          schema: accountLedgerSchema,
        });
      } catch (error) {
        // A service without the local extension: no ledger to read.
        if (isMissingRoute(error)) return null;
        throw error;
      }
    },
    async lookupKey(idempotencyKey) {
      try {
        return await calls.idempotent({
          kind: 'lookup',
          method: 'GET',
          url: `${calls.baseUrl}/v1/queue/requests?idempotency_key=${encodeURIComponent(idempotencyKey)}`,
          schema: keyLookupSchema,
        });
      } catch (error) {
        // A service without the local extension: nothing to look up by key.
        if (isMissingRoute(error)) return null;
        throw error;
      }
    },
  };
}

/** One HTTP call: through the account's rate gate, counted, its answer parsed or made a typed error. */
async function callOnce<T>(connection: Connection, spec: CallSpec<T>): Promise<T> {
  const gated = spec.kind !== 'ledger' && spec.kind !== 'lookup' ? spec.kind : undefined;
  if (gated && connection.options.rateGate) await connection.options.rateGate.wait(gated, spec.signal);
  if (gated) connection.options.onRequest?.(gated);
  if (!tracingOn()) return exchange(connection, spec, {}, () => undefined);
  // A span per HTTP request when the process traces; its context goes to the service as `traceparent`.
  return inSpan(serviceCallSpanName(spec), { role: 'client', attributes: serviceCallAttributes(spec) }, (span, trace) =>
    exchange(connection, spec, trace, (status) => span?.setAttribute('http.response.status_code', status)),
  );
}

/** The request and its answer: the body parsed by the spec's schema, or a typed error. */
async function exchange<T>(
  connection: Connection,
  spec: CallSpec<T>,
  traceHeaders: Record<string, string>,
  onStatus: (status: number) => void,
): Promise<T> {
  const gated = spec.kind !== 'ledger' && spec.kind !== 'lookup' ? spec.kind : undefined;
  let response: Dispatcher.ResponseData;
  try {
    response = await request(spec.url, {
      method: spec.method,
      dispatcher: connection.dispatcher,
      headers: {
        authorization: connection.authorization,
        accept: 'application/json, application/problem+json',
        ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...traceHeaders,
        ...spec.headers,
      },
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      signal: spec.signal
        ? AbortSignal.any([spec.signal, AbortSignal.timeout(connection.timeoutMs)])
        : AbortSignal.timeout(connection.timeoutMs),
    });
  } catch (error) {
    connection.options.onResponse?.(spec.kind, 'network');
    throw classifyTransportError(error, spec);
  }
  connection.options.onResponse?.(spec.kind, response.statusCode);
  onStatus(response.statusCode);
  let text: string;
  try {
    text = await readLimited(response.body);
  } catch (error) {
    // The service answered (a status line arrived) but the body was lost: for a submit the
    // job may exist, so this is ambiguous too.
    throw classifyTransportError(error, spec);
  }
  if (response.statusCode >= 200 && response.statusCode < 300) {
    return spec.kind === 'submit' ? parseSubmitAnswer(text, spec) : parseBody(text, spec.schema, spec);
  }
  const problem = toProblemError(response.statusCode, response.headers, text);
  if (gated && problem.status === 429 && problem.retryAfterSeconds !== undefined)
    connection.options.rateGate?.limited(gated, problem.retryAfterSeconds * 1000);
  throw problem;
}

async function withRetries<T>(
  once: (spec: CallSpec<T>) => Promise<T>,
  spec: CallSpec<T>,
  rule: RetryRule,
  shouldRetry: (error: ServiceClientError) => boolean,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await once(spec);
    } catch (error) {
      if (!(error instanceof ServiceClientError) || attempt >= rule.maxAttempts || !shouldRetry(error)) throw error;
      const retryAfterMs = retryAfterMsOf(error);
      if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_AFTER_MS) throw error;
      await sleep(backoffDelayMs(rule, attempt, retryAfterMs));
    }
  }
}

/**
 * A submit under the policy: retried (same key) only where SUBMIT_POLICY says so, within the submit
 * rule; a failure that may have created a job and is not retried (any more) is an
 * AmbiguousSubmissionError naming the key. An abort (cancellation, deadline) stops it at once.
 */
async function submitWithPolicy<T>(
  once: (spec: CallSpec<T>) => Promise<T>,
  spec: CallSpec<T>,
  rule: RetryRule,
  idempotency: IdempotencySetting,
): Promise<T> {
  const key = spec.headers?.['idempotency-key'];
  for (let attempt = 1; ; attempt += 1) {
    try {
      spec.signal?.throwIfAborted();
      return await once(spec);
    } catch (error) {
      if (!(error instanceof ServiceClientError)) throw error;
      const kind = submitFailureKind(error);
      const action = submitAction(kind, idempotency);
      const retryAfterMs = retryAfterMsOf(error);
      const exhausted =
        attempt >= rule.maxAttempts ||
        (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_AFTER_MS) ||
        spec.signal?.aborted === true;
      const next = action === 'retry' && exhausted ? EXHAUSTED_RETRY_ACTION[kind] : action;
      if (next === 'ambiguous') throw ambiguous(error, key, attempt, idempotency);
      if (next === 'final') throw error;
      try {
        await sleep(
          backoffDelayMs(rule, attempt, retryAfterMs),
          undefined,
          spec.signal ? { signal: spec.signal } : undefined,
        );
      } catch {
        // Aborted while backing off: the last failure stands, ambiguous if it may have sent.
        if (kind === 'maybe-sent') throw ambiguous(error, key, attempt, idempotency);
        throw error;
      }
    }
  }
}

/** How long the service asked to wait before the next attempt (Retry-After), if it did. */
function retryAfterMsOf(error: ServiceClientError): number | undefined {
  return error instanceof ServiceProblemError && error.retryAfterSeconds !== undefined
    ? error.retryAfterSeconds * 1000
    : undefined;
}

function ambiguous(
  error: ServiceClientError,
  key: string | undefined,
  attempts: number,
  idempotency: IdempotencySetting,
): AmbiguousSubmissionError {
  const retried = attempts > 1 ? ` after ${attempts} attempts with the same key` : '';
  return new AmbiguousSubmissionError(
    `submit may have created a job but gave no usable answer${retried} (${error.message}); the job may exist and be billed` +
      idempotencyHint(key),
    key,
    idempotency === 'honoured',
    attempts,
  );
}

function idempotencyHint(key: string | undefined): string {
  return key
    ? `; look it up by Idempotency-Key ${key} (resubmitting with the same key returns the original job)`
    : '; check the account for a job created at this time before submitting again';
}

/** Where a failed submit stands (SubmitFailureKind): the rows of SUBMIT_POLICY. */
export function submitFailureKind(error: ServiceClientError): SubmitFailureKind {
  if (error instanceof ServiceUnreachableError) return 'not-sent';
  if (error instanceof SubmitAnswerInvalidError) return 'bad-answer';
  if (error instanceof ServiceProblemError) {
    if (error.status === 429 || NOT_ACCEPTED_PROBLEM_CODES.has(error.code)) return 'refused';
    // A 5xx or 408 that does not say the job was refused may come after the job was created.
    if (error.status >= 500 || error.status === 408) return 'maybe-sent';
    return 'rejected';
  }
  // Lost or late answers (ServiceTimeoutError) and anything else after sending.
  return 'maybe-sent';
}

function classifyTransportError(error: unknown, spec: CallSpec<unknown>): ServiceClientError {
  const code = errorCode(error);
  const target = new URL(spec.url);
  const where = `${spec.method} ${target.origin}${target.pathname}`;
  if (code && NOT_SENT_CODES.has(code)) {
    return new ServiceUnreachableError(
      `cannot reach the service at ${target.origin} (${code}); is it running, and is the base URL right?`,
      code,
    );
  }
  if (spec.kind === 'submit') {
    // Sent, no answer: SUBMIT_POLICY decides between a same-key retry and ambiguity.
    return new ServiceTimeoutError(`submit (${where}) was sent but no answer came back (${code ?? describe(error)})`);
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
      throw Object.assign(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`), {
        code: 'RESPONSE_TOO_LARGE',
      });
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The submit's 2xx answer: a body that breaks the contract still means an accepted, billed job, so
 * what can be read of it is kept (SubmitAnswerInvalidError) instead of dropped.
 */
function parseSubmitAnswer<T>(text: string, spec: CallSpec<T>): T {
  try {
    return parseBody(text, spec.schema, spec);
  } catch (error) {
    if (!(error instanceof UnexpectedResponseError)) throw error;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const record = json && typeof json === 'object' ? (json as Record<string, unknown>) : {};
    const requestId =
      typeof record.request_id === 'string' && record.request_id.length > 0 ? record.request_id : undefined;
    const cancelUrl = typeof record.cancel_url === 'string' ? record.cancel_url : undefined;
    const key = spec.headers?.['idempotency-key'];
    throw new SubmitAnswerInvalidError(
      `${error.message}; the service accepted the submit${requestId ? ` as request ${requestId}` : ' without a readable request id'}${key ? ` (Idempotency-Key ${key})` : ''}`,
      error.fieldErrors,
      key,
      requestId,
      cancelUrl,
      text.slice(0, 2000),
    );
  }
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
    throw new UnexpectedResponseError(
      `${spec.kind}: the answer does not match the contract (${errors.map((e) => `${e.path}: ${e.message}`).join('; ')})`,
      errors,
    );
  }
  return parsed.data;
}

function toProblemError(
  status: number,
  headers: Dispatcher.ResponseData['headers'],
  text: string,
): ServiceProblemError {
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
    return new ServiceProblemError(
      status,
      `http_${status}`,
      `the service answered HTTP ${status} without a problem document`,
      [],
      retryAfterSeconds,
    );
  }
  const { code, title, detail, errors, job_status: jobStatus } = problem.data;
  const message = [title, detail].filter(Boolean).join(': ') || `HTTP ${status}`;
  return new ServiceProblemError(status, code, `${message} (${code})`, errors ?? [], retryAfterSeconds, jobStatus);
}
