import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AmbiguousSubmissionError,
  ServiceProblemError,
  ServiceTimeoutError,
  ServiceUnreachableError,
  SubmitAnswerInvalidError,
  UnexpectedResponseError,
  createServiceClient,
} from '../../../src/client';

/** A real HTTP server on loopback whose answers each test scripts; it records every request. */
interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}
type Handler = (req: IncomingMessage, res: ServerResponse, body: string, index: number) => void;

let server: Server;
let baseUrl: string;
let handler: Handler;
let recorded: Recorded[];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      recorded.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at: Date.now() });
      handler(req, res, body, recorded.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  recorded = [];
});

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function problem(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
  res.end(JSON.stringify({ status, ...body }));
}

function generationRequest(id = 'req-1') {
  return {
    request_id: id,
    status: 'IN_QUEUE',
    model: 'service-upscale-video-fast',
    status_url: `${baseUrl}/v1/queue/requests/${id}/status`,
    response_url: `${baseUrl}/v1/queue/requests/${id}`,
    cancel_url: `${baseUrl}/v1/queue/requests/${id}/cancel`,
  };
}

const fastRetry = { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 50, jitter: 0 };
const input = { video_url: 'https://cdn.example.com/clip.mp4' };

function client(overrides: Partial<Parameters<typeof createServiceClient>[0]> = {}) {
  return createServiceClient({
    baseUrl,
    apiKey: 'test-key-123',
    retry: fastRetry,
    submitRetry: fastRetry,
    ...overrides,
  });
}

describe('service client', () => {
  it('sends the key with the Key scheme by default, and Bearer when configured', async () => {
    handler = (_req, res) => json(res, 200, { status: 'IN_PROGRESS' });
    await client().status('r1');
    await client({ authScheme: 'Bearer' }).status('r1');
    expect(recorded.map((r) => r.headers.authorization)).toEqual(['Key test-key-123', 'Bearer test-key-123']);
  });

  it('submits to /v1/queue/{model} with the Idempotency-Key and parses the generation request', async () => {
    handler = (_req, res) => json(res, 202, generationRequest());
    const created = await client().submit('service-upscale-video-fast', input, { idempotencyKey: 'pipe/job/up#1' });
    expect(created.request_id).toBe('req-1');
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ method: 'POST', url: '/v1/queue/service-upscale-video-fast' });
    expect(recorded[0]?.headers['idempotency-key']).toBe('pipe/job/up#1');
    expect(recorded[0]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(recorded[0]?.body ?? '')).toEqual(input);
  });

  it('follows status_url, response_url and cancel_url as given, with the configured cancel method', async () => {
    handler = (req, res) => {
      if (req.url?.startsWith('/elsewhere/status')) return json(res, 200, { status: 'COMPLETED' });
      if (req.url?.startsWith('/elsewhere/result'))
        return json(res, 200, {
          request_id: 'r',
          status: 'COMPLETED',
          model: 'm',
          credits_used: null,
          videos: [{ url: 'https://x/y.mp4', file_name: 'y.mp4', content_type: 'video/mp4' }],
        });
      return json(res, 202, { request_id: 'r', status: 'CANCELLED' });
    };
    const c = client({ cancelMethod: 'PUT' });
    await c.status('r', { statusUrl: `${baseUrl}/elsewhere/status` });
    const result = await c.result('r', { responseUrl: `${baseUrl}/elsewhere/result` });
    await c.cancel('r', { cancelUrl: `${baseUrl}/elsewhere/cancel` });
    expect(result.videos[0]?.url).toBe('https://x/y.mp4');
    expect(recorded.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /elsewhere/status',
      'GET /elsewhere/result',
      'PUT /elsewhere/cancel',
    ]);
  });

  it('builds default URLs from the base URL and sends the quote body with the model', async () => {
    handler = (_req, res) =>
      json(res, 200, {
        model: 'service-upscale-video-fast',
        credits: 20,
        pricing_unit: 'per-output-second',
        billed_seconds: 10,
      });
    const quote = await client({ baseUrl: `${baseUrl}/` }).quote('service-upscale-video-fast', input);
    expect(quote.credits).toBe(20);
    expect(recorded[0]?.url).toBe('/v1/pricing/quote');
    expect(JSON.parse(recorded[0]?.body ?? '')).toEqual({ model: 'service-upscale-video-fast', input });
  });

  it('maps a problem document to a typed error carrying status, code and field errors', async () => {
    handler = (_req, res) =>
      problem(res, 422, {
        code: 'validation_failed',
        title: 'Invalid input',
        errors: [{ path: 'video_url', message: 'must use https' }],
      });
    const error = await client()
      .submit('service-upscale-video-fast', input)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceProblemError);
    expect(error).toMatchObject({ type: 'ServiceProblem', status: 422, code: 'validation_failed', retryable: false });
    expect((error as ServiceProblemError).fieldErrors).toEqual([{ path: 'video_url', message: 'must use https' }]);
    expect(recorded).toHaveLength(1);
  });

  it('maps the job state of a 409 and gives a synthetic code to an error without a problem document', async () => {
    handler = (_req, res, _body, index) =>
      index === 0
        ? problem(res, 409, { code: 'result_not_ready', job_status: 'IN_PROGRESS' })
        : res.writeHead(404).end('nope');
    await expect(client().result('r')).rejects.toMatchObject({
      status: 409,
      code: 'result_not_ready',
      jobStatus: 'IN_PROGRESS',
    });
    await expect(client().result('r')).rejects.toMatchObject({ status: 404, code: 'http_404' });
  });

  it('retries an idempotent call on 503 and 429, waiting at least Retry-After', async () => {
    handler = (_req, res, _body, index) => {
      if (index === 0) return problem(res, 503, { code: 'service_unavailable' }, { 'retry-after': '1' });
      if (index === 1) return problem(res, 429, { code: 'rate_limited' }, { 'retry-after': '1' });
      return json(res, 200, { status: 'IN_QUEUE', queue_position: 3 });
    };
    const status = await client().status('r');
    expect(status).toMatchObject({ status: 'IN_QUEUE', queue_position: 3 });
    expect(recorded).toHaveLength(3);
    const [first, second, third] = recorded as [Recorded, Recorded, Recorded];
    expect(second.at - first.at).toBeGreaterThanOrEqual(950);
    expect(third.at - second.at).toBeGreaterThanOrEqual(950);
  });

  it('reports every answer by call kind and status, and a call that got none as network', async () => {
    handler = (_req, res, _body, index) =>
      index === 0
        ? problem(res, 429, { code: 'rate_limited' }, { 'retry-after': '0' })
        : json(res, 200, { status: 'IN_QUEUE' });
    const seen: string[] = [];
    await client({ onResponse: (kind, status) => seen.push(`${kind} ${status}`) }).status('r');
    expect(seen).toEqual(['status 429', 'status 200']);
    const unreachable = createServiceClient({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: 'k',
      retry: { ...fastRetry, maxAttempts: 1 },
      onResponse: (kind, status) => seen.push(`${kind} ${status}`),
    });
    await expect(unreachable.status('r')).rejects.toThrow();
    expect(seen.at(-1)).toBe('status network');
    await unreachable.close();
  });

  it('gives up after the rule’s attempts and surfaces the last error', async () => {
    handler = (_req, res) => problem(res, 500, { code: 'internal_error' });
    await expect(client().status('r')).rejects.toMatchObject({ status: 500, code: 'internal_error' });
    expect(recorded).toHaveLength(fastRetry.maxAttempts);
  });

  it('does not retry an idempotent call on a permanent error', async () => {
    handler = (_req, res) => problem(res, 401, { code: 'unauthorized' });
    await expect(client().status('r')).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(recorded).toHaveLength(1);
  });

  it('retries a submit on 429 (provably not accepted) and sends the same Idempotency-Key each time', async () => {
    handler = (_req, res, _body, index) =>
      index === 0 ? problem(res, 429, { code: 'rate_limited' }) : json(res, 202, generationRequest());
    await client().submit('service-upscale-video-fast', input, { idempotencyKey: 'k-1' });
    expect(recorded.map((r) => r.headers['idempotency-key'])).toEqual(['k-1', 'k-1']);
  });

  it('a submit with `attempts: 1` answers the first refusal without retrying or waiting', async () => {
    handler = (_req, res) => problem(res, 429, { code: 'rate_limited' }, { 'retry-after': '30' });
    await expect(
      client({ idempotency: 'honoured' }).submit('service-upscale-video-fast', input, {
        idempotencyKey: 'k-once',
        attempts: 1,
      }),
    ).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    // One request, and its Retry-After of 30 s not waited out (the default rule would, then try again).
    expect(recorded).toHaveLength(1);
  });

  it('unknown: a 500 whose problem does not say the job was refused is ambiguous, never retried', async () => {
    handler = (_req, res) => problem(res, 500, { code: 'internal_error' });
    const error = await client()
      .submit('service-upscale-video-fast', input, { idempotencyKey: 'k-500' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AmbiguousSubmissionError);
    expect(error).toMatchObject({ retryable: false, idempotencyKey: 'k-500', attempts: 1 });
    expect((error as Error).message).toContain('internal_error');
    expect(recorded).toHaveLength(1);
  });

  it('honoured: a 500 and a dropped answer are retried with the same key and the returned job adopted', async () => {
    handler = (req, res, _body, index) =>
      index === 0
        ? problem(res, 500, { code: 'internal_error' })
        : index === 1
          ? req.socket.destroy()
          : json(res, 202, generationRequest('adopted'));
    const created = await client({ idempotency: 'honoured' }).submit('service-upscale-video-fast', input, {
      idempotencyKey: 'k-h',
    });
    expect(created.request_id).toBe('adopted');
    expect(recorded.map((r) => r.headers['idempotency-key'])).toEqual(['k-h', 'k-h', 'k-h']);
  });

  it('honoured: retries are bounded; once used up the submit is ambiguous and still safe to repeat with the key', async () => {
    handler = (req) => req.socket.destroy();
    const error = await client({ idempotency: 'honoured' })
      .submit('service-upscale-video-fast', input, { idempotencyKey: 'k-x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AmbiguousSubmissionError);
    expect(error).toMatchObject({ retryable: true, attempts: fastRetry.maxAttempts, idempotencyKey: 'k-x' });
    expect(recorded).toHaveLength(fastRetry.maxAttempts);
  });

  it('both settings: a 4xx is final and not retried', async () => {
    for (const idempotency of ['honoured', 'unknown'] as const) {
      recorded = [];
      handler = (_req, res) => problem(res, 409, { code: 'idempotency_conflict' });
      await expect(
        client({ idempotency }).submit('service-upscale-video-fast', input, { idempotencyKey: 'k' }),
      ).rejects.toMatchObject({ status: 409, code: 'idempotency_conflict' });
      expect(recorded).toHaveLength(1);
    }
  });

  it('an aborted signal stops a submit between retries (the activity was cancelled or reached its deadline)', async () => {
    handler = (req) => req.socket.destroy();
    const abort = new AbortController();
    // A retry a minute away: the abort must end the wait, not the retry delay (bound 12 s, 5× margin both ways).
    const slow = { maxAttempts: 5, initialDelayMs: 60_000, maxDelayMs: 60_000, jitter: 0 };
    const pending = client({ idempotency: 'honoured', submitRetry: slow })
      .submit('service-upscale-video-fast', input, { idempotencyKey: 'k-a', signal: abort.signal })
      .catch((e: unknown) => e);
    // Wait for the first attempt itself (a condition, not a fixed pause), then abort during the backoff.
    while (recorded.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    abort.abort();
    const started = Date.now();
    const error = await pending;
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(error).toBeInstanceOf(AmbiguousSubmissionError);
    expect(recorded).toHaveLength(1);
  });

  it('never resubmits when the service accepted the request and dropped the connection', async () => {
    handler = (req) => req.socket.destroy();
    const error = await client()
      .submit('service-upscale-video-fast', input, { idempotencyKey: 'pipe/job/a#1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AmbiguousSubmissionError);
    expect(error).toMatchObject({ type: 'AmbiguousSubmission', retryable: false, idempotencyKey: 'pipe/job/a#1' });
    expect((error as Error).message).toContain('pipe/job/a#1');
    expect(recorded).toHaveLength(1);
  });

  it('treats a submit that times out after being sent as ambiguous, without a second attempt', async () => {
    handler = () => undefined; // accepts the request, never answers
    const error = await client({ timeoutMs: 300 })
      .submit('service-upscale-video-fast', input)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AmbiguousSubmissionError);
    expect(recorded).toHaveLength(1);
  });

  it('times out an idempotent call and retries it', async () => {
    handler = (_req, res, _body, index) => (index === 0 ? undefined : json(res, 200, { status: 'COMPLETED' }));
    await expect(client({ timeoutMs: 300 }).status('r')).resolves.toMatchObject({ status: 'COMPLETED' });
    expect(recorded).toHaveLength(2);
  });

  it('surfaces a timeout after the last attempt as a typed error', async () => {
    handler = () => undefined;
    const c = client({ timeoutMs: 200, retry: { ...fastRetry, maxAttempts: 1 } });
    await expect(c.status('r')).rejects.toBeInstanceOf(ServiceTimeoutError);
  });

  it('retries a submit when the service cannot be reached, and says where it tried', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const attempts: string[] = [];
    const c = createServiceClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      submitRetry: fastRetry,
      onRequest: (kind) => attempts.push(kind),
    });
    const error = await c.submit('service-upscale-video-fast', input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnreachableError);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect(attempts).toEqual(['submit', 'submit', 'submit']);
  });

  it('keeps what it can read of a 202 that does not match the contract: the job exists and is billed', async () => {
    handler = (_req, res) => json(res, 202, { request_id: 'x', cancel_url: `${baseUrl}/v1/queue/requests/x/cancel` });
    const error = await client({ idempotency: 'honoured' })
      .submit('service-upscale-video-fast', input, { idempotencyKey: 'k-bad' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SubmitAnswerInvalidError);
    const invalid = error as SubmitAnswerInvalidError;
    expect(invalid.fieldErrors.map((e) => e.path)).toEqual(expect.arrayContaining(['status', 'status_url']));
    expect(invalid).toMatchObject({
      requestId: 'x',
      cancelUrl: `${baseUrl}/v1/queue/requests/x/cancel`,
      idempotencyKey: 'k-bad',
      retryable: false,
    });
    expect(invalid.bodyExcerpt).toContain('"request_id":"x"');
    expect(invalid.message).toMatch(/accepted the submit as request x/);
    // Never retried, in either setting: a repeat would not mend the answer.
    expect(recorded).toHaveLength(1);
  });

  it('refuses a 2xx answer of another call that does not match the contract', async () => {
    handler = (_req, res) => json(res, 200, { status: 'NOPE' });
    await expect(client().status('x')).rejects.toBeInstanceOf(UnexpectedResponseError);
  });
});

describe('local-service extensions', () => {
  it('reads no ledger and looks up no key on a service without those routes (404, 405); other refusals still throw', async () => {
    let status = 404;
    handler = (_req, res) => problem(res, status, { code: status === 404 ? 'not_found' : 'method_not_allowed' });
    const c = client();
    await expect(c.ledger()).resolves.toBeNull();
    await expect(c.lookupKey('k-1')).resolves.toBeNull();
    status = 405;
    await expect(c.ledger()).resolves.toBeNull();
    status = 401;
    await expect(c.ledger()).rejects.toBeInstanceOf(ServiceProblemError);
    expect(recorded.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/account/ledger',
      'GET /v1/queue/requests?idempotency_key=k-1',
      'GET /v1/account/ledger',
      'GET /v1/account/ledger',
    ]);
    await c.close();
  });
});
