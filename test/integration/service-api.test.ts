import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  JOB_STATES,
  LOCAL_PER_SECOND_RATES,
  LONG_FORM_DURATIONS,
  LONG_FORM_PRICES,
  PROBLEM_CODES,
  PROCESSING_SPEEDS,
  RESOLUTIONS,
  generationRequestSchema,
  problemSchema,
  resultSchema,
  statusResponseSchema,
} from '../../src/contract';
import { startLocalService } from '../../src/local-service';
import { loadServiceConfig } from '../../src/config';
import { runFfmpeg } from '../../src/media/ffmpeg';
import { canTransition } from '../../src/local-service/queue/transitions';
import {
  LONG_FORM,
  PIXEL_PNG,
  TEST_ADMIN_KEY,
  TEST_API_KEY,
  api,
  startTestService,
  waitForStatus,
  waitUntil,
  type ApiResponse,
  type TestService,
} from '../helpers/local-service';

/** The local service's HTTP API, driven over real HTTP on loopback with real ffmpeg renders. */

let svc: TestService;
const input = { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' };

function expectProblem(response: ApiResponse, code: keyof typeof PROBLEM_CODES): void {
  expect(response.contentType).toMatch(/^application\/problem\+json/);
  expect(response.status).toBe(PROBLEM_CODES[code]);
  expect(problemSchema.parse(response.body).code).toBe(code);
  expect(response.body.status).toBe(PROBLEM_CODES[code]);
}

async function submit(body: unknown = input, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return svc.call('POST', `/v1/queue/${LONG_FORM}`, { body, headers });
}

async function balance(): Promise<number> {
  return (await svc.call('GET', '/v1/account/balance')).body.credits;
}

beforeAll(async () => {
  // This file prices every cell of the table through one key; the quote limiter (30 at once, then 2/s)
  // has its own tests (service-pricing-bytes), so here it is wide enough never to answer 429.
  svc = await startTestService({ credits: 10_000, quoteLimits: { perMinute: 6_000, burst: 1_000 } });
});
afterAll(async () => {
  await svc?.close();
});
afterEach(async () => {
  svc.service.setFaults({
    modelDurationMs: 0,
    failureRate: 0,
    submitErrorRate: 0,
    dropSubmitResponseRate: 0,
    responseDelayMs: 0,
  });
  // A failed test must not leave long jobs holding the model's slots for the next one.
  for (const job of svc.service.jobs()) {
    if (job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS')
      await svc.call('POST', `/v1/queue/requests/${job.id}/cancel`);
  }
});

describe('authentication', () => {
  test('Key and Bearer schemes, case-insensitive, are accepted', async () => {
    for (const scheme of ['Key', 'key', 'KEY', 'Bearer', 'bearer', 'BeArEr']) {
      const response = await svc.call('GET', '/v1/account/balance', {
        key: null,
        headers: { authorization: `${scheme} ${TEST_API_KEY}` },
      });
      expect(response.status).toBe(200);
    }
  });

  test('missing, malformed and unknown keys get 401 problem documents', async () => {
    expectProblem(await svc.call('GET', '/v1/account/balance', { key: null }), 'unauthorized');
    expectProblem(
      await svc.call('GET', '/v1/account/balance', { key: null, headers: { authorization: `Basic ${TEST_API_KEY}` } }),
      'unauthorized',
    );
    expectProblem(await svc.call('GET', '/v1/account/balance', { key: 'not-a-real-key-123' }), 'unauthorized');
  });

  test('a created key works at once and stops working once revoked', async () => {
    const created = await svc.call('POST', '/v1/account/keys');
    expect(created.status).toBe(201);
    const { id, key } = created.body;
    expect(typeof key).toBe('string');
    expect((await svc.call('GET', '/v1/account/balance', { key })).status).toBe(200);
    const listed = await svc.call('GET', '/v1/account/keys');
    expect(JSON.stringify(listed.body)).not.toContain(key);
    expect(listed.body.keys.map((k: { id: string }) => k.id)).toContain(id);
    expect((await svc.call('DELETE', `/v1/account/keys/${id}`)).status).toBe(204);
    expectProblem(await svc.call('GET', '/v1/account/balance', { key }), 'unauthorized');
    expectProblem(await svc.call('DELETE', '/v1/account/keys/key_nope'), 'not_found');
  });
});

describe('submit, status, result', () => {
  test('a job goes IN_QUEUE -> IN_PROGRESS -> COMPLETED, is charged, and its output is served', async () => {
    svc.service.setFaults({ modelDurationMs: 400 });
    const before = await balance();
    const submitted = await submit();
    expect(submitted.status).toBe(202);
    const request = generationRequestSchema.parse(submitted.body);
    expect(request.status).toBe('IN_QUEUE');
    expect(request.model).toBe(LONG_FORM);
    expect(request.status_url).toBe(`${svc.url}/v1/queue/requests/${request.request_id}/status`);
    expect(request.response_url).toBe(`${svc.url}/v1/queue/requests/${request.request_id}`);
    expect(request.cancel_url).toBe(`${svc.url}/v1/queue/requests/${request.request_id}/cancel`);
    expect(await balance()).toBe(before - LONG_FORM_PRICES['4']['480p standard']);

    await waitForStatus(svc.url, request.request_id, (s) => s === 'IN_PROGRESS');
    const notReady = await api(svc.url, 'GET', request.response_url);
    expectProblem(notReady, 'result_not_ready');
    expect(notReady.body.job_status).toBe('IN_PROGRESS');

    await waitForStatus(svc.url, request.request_id, (s) => s === 'COMPLETED');
    const status = statusResponseSchema.parse((await api(svc.url, 'GET', request.status_url)).body);
    expect(status).toMatchObject({ status: 'COMPLETED', request_id: request.request_id, queue_position: null });
    const result = await api(svc.url, 'GET', request.response_url);
    expect(result.status).toBe(200);
    const parsed = resultSchema.parse(result.body);
    expect(parsed.credits_used).toBe(80);
    expect(parsed.videos.length).toBeGreaterThan(0);
    const video = parsed.videos[0]!;
    expect(video.url.startsWith(`${svc.url}/files/${request.request_id}/`)).toBe(true);
    const file = await api(svc.url, 'GET', video.url, { key: null });
    expect(file.status).toBe(200);
    expect(file.contentType).toBe(video.content_type);

    const job = svc.service.jobs().find((j) => j.id === request.request_id)!;
    expect(job.completedAt! - job.startedAt!).toBeGreaterThanOrEqual(400);
    expect(await balance()).toBe(before - 80);
  });

  test('queue position counts the jobs ahead while concurrency is saturated', async () => {
    svc.service.setFaults({ modelDurationMs: 60_000 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await submit()).body.request_id);
    const statuses = await Promise.all(
      ids.map(async (id) => (await svc.call('GET', `/v1/queue/requests/${id}/status`)).body),
    );
    expect(statuses.map((s) => s.status)).toEqual(['IN_PROGRESS', 'IN_PROGRESS', 'IN_QUEUE', 'IN_QUEUE']);
    expect(statuses.map((s) => s.queue_position)).toEqual([null, null, 0, 1]);
    for (const id of ids) expect((await svc.call('POST', `/v1/queue/requests/${id}/cancel`)).status).toBe(202);
  });

  test('unknown request and unknown model are 404; unknown route is 404', async () => {
    expectProblem(await svc.call('GET', '/v1/queue/requests/nope/status'), 'not_found');
    expectProblem(await svc.call('GET', '/v1/queue/requests/nope'), 'not_found');
    expectProblem(await svc.call('POST', '/v1/queue/requests/nope/cancel'), 'not_found');
    expectProblem(await svc.call('POST', '/v1/queue/service-nope', { body: input }), 'not_found');
    expectProblem(await svc.call('GET', '/v1/nothing-here'), 'not_found');
  });

  test('invalid input is 422 with field paths', async () => {
    const response = await submit({ image_urls: [PIXEL_PNG, 'http://example.com/a.png'], duration: '7', extra: 1 });
    expectProblem(response, 'validation_failed');
    const paths = response.body.errors.map((e: { path: string }) => e.path);
    expect(paths.sort()).toEqual(['duration', 'extra', 'image_urls.1']);
    const tooMany = await submit({ image_urls: Array(31).fill(PIXEL_PNG) });
    expect(tooMany.body.errors.map((e: { path: string }) => e.path)).toEqual(['image_urls']);
    expectProblem(await svc.call('POST', `/v1/queue/${LONG_FORM}`, { rawBody: '{not json' }), 'validation_failed');
  });

  test('a non-JSON body is 415 and an oversized body is 413', async () => {
    expectProblem(
      await svc.call('POST', `/v1/queue/${LONG_FORM}`, { rawBody: 'x', headers: { 'content-type': 'text/plain' } }),
      'unsupported_media_type',
    );
    const withCharset = await svc.call('POST', `/v1/queue/${LONG_FORM}`, {
      body: input,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(withCharset.status).toBe(202);
    const emptyJsonCancel = await svc.call('POST', `/v1/queue/requests/${withCharset.body.request_id}/cancel`, {
      rawBody: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(emptyJsonCancel.status).toBe(202);
    const huge = JSON.stringify({ image_urls: [`data:image/png;base64,${'A'.repeat(51 * 1024 * 1024)}`] });
    expectProblem(await svc.call('POST', `/v1/queue/${LONG_FORM}`, { rawBody: huge }), 'payload_too_large');
  });
});

describe('cancel', () => {
  test('cancel from IN_QUEUE and from IN_PROGRESS refunds; cancel from a terminal state is 409', async () => {
    svc.service.setFaults({ modelDurationMs: 60_000 });
    const before = await balance();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await submit()).body.request_id);
    const [running, , queued] = ids as [string, string, string];
    expect((await svc.call('GET', `/v1/queue/requests/${queued}/status`)).body.status).toBe('IN_QUEUE');
    expect(await balance()).toBe(before - 240);

    const cancelQueued = await svc.call('POST', `/v1/queue/requests/${queued}/cancel`);
    expect(cancelQueued.status).toBe(202);
    expect(cancelQueued.body).toEqual({ request_id: queued, status: 'CANCELLED' });
    await waitForStatus(svc.url, running, (s) => s === 'IN_PROGRESS');
    const cancelRunning = await svc.call('POST', `/v1/queue/requests/${running}/cancel`);
    expect(cancelRunning.body).toEqual({ request_id: running, status: 'CANCELLED' });
    expect(await balance()).toBe(before - 80);

    const again = await svc.call('POST', `/v1/queue/requests/${running}/cancel`);
    expectProblem(again, 'cancel_too_late');
    expect(again.body.job_status).toBe('CANCELLED');
    const result = await svc.call('GET', `/v1/queue/requests/${running}`);
    expectProblem(result, 'result_not_ready');
    expect(result.body.job_status).toBe('CANCELLED');
    await svc.call('POST', `/v1/queue/requests/${ids[1]}/cancel`);
    expect(await balance()).toBe(before);
    const ledger = (await svc.call('GET', '/v1/account/ledger')).body;
    expect(
      ledger.entries
        .filter((e: { request_id: string }) => e.request_id === running)
        .map((e: { amount: number }) => e.amount),
    ).toEqual([-80, 80]);
  });

  test('a completed job refuses cancel (409) and keeps its charge', async () => {
    const id = (await submit()).body.request_id;
    await waitForStatus(svc.url, id, (s) => s === 'COMPLETED');
    const before = await balance();
    const response = await svc.call('POST', `/v1/queue/requests/${id}/cancel`);
    expectProblem(response, 'cancel_too_late');
    expect(response.body.job_status).toBe('COMPLETED');
    expect(await balance()).toBe(before);
  });
});

describe('failures and credits', () => {
  test('a failed job ends FAILED, is refunded, and its result is 409 with job_status FAILED', async () => {
    svc.service.setFaults({ failureRate: 1 });
    const before = await balance();
    const id = (await submit()).body.request_id;
    await waitForStatus(svc.url, id, (s) => s === 'FAILED');
    const status = (await svc.call('GET', `/v1/queue/requests/${id}/status`)).body;
    expect(status.error.code).toBe('generation_failed');
    const result = await svc.call('GET', `/v1/queue/requests/${id}`);
    expectProblem(result, 'result_not_ready');
    expect(result.body.job_status).toBe('FAILED');
    expect(await balance()).toBe(before);
    expectProblem(await svc.call('POST', `/v1/queue/requests/${id}/cancel`), 'cancel_too_late');
  });

  test('insufficient credits is 402 and creates no job', async () => {
    const small = await startTestService({ credits: 100 });
    try {
      const jobsBefore = small.service.jobs().length;
      const response = await small.call('POST', `/v1/queue/${LONG_FORM}`, { body: { ...input, resolution: '720p' } });
      expectProblem(response, 'insufficient_credits');
      expect(small.service.jobs().length).toBe(jobsBefore);
      expect((await small.call('GET', '/v1/account/balance')).body.credits).toBe(100);
    } finally {
      await small.close();
    }
  });
});

describe('idempotency', () => {
  test('the same Idempotency-Key returns the original job; a different body is 409', async () => {
    const before = await balance();
    const first = await submit(input, { 'idempotency-key': 'step-1' });
    const second = await submit(input, { 'idempotency-key': 'step-1' });
    expect(second.status).toBe(202);
    expect(second.body.request_id).toBe(first.body.request_id);
    expect(await balance()).toBe(before - 80);
    const conflict = await submit({ ...input, duration: '5' }, { 'idempotency-key': 'step-1' });
    expectProblem(conflict, 'idempotency_conflict');
    const concurrent = await Promise.all([1, 2, 3].map(() => submit(input, { 'idempotency-key': 'step-2' })));
    expect(new Set(concurrent.map((r) => r.body.request_id)).size).toBe(1);
    expect(svc.service.jobs().filter((j) => j.idempotencyKey === 'step-2')).toHaveLength(1);
  });
});

describe('quote', () => {
  test('all 28 long-form cells equal the price table', async () => {
    const calls: Promise<void>[] = [];
    for (const duration of LONG_FORM_DURATIONS)
      for (const resolution of RESOLUTIONS)
        for (const speed of PROCESSING_SPEEDS)
          calls.push(
            (async () => {
              const response = await svc.call('POST', '/v1/pricing/quote', {
                body: {
                  model: LONG_FORM,
                  input: { image_urls: [PIXEL_PNG], duration, resolution, processing_speed: speed },
                },
              });
              expect(response.status).toBe(200);
              expect(response.body).toEqual({
                model: LONG_FORM,
                credits: LONG_FORM_PRICES[duration][`${resolution} ${speed}`],
                pricing_unit: 'per-request',
                billed_seconds: null,
              });
            })(),
          );
    await Promise.all(calls);
    expect(calls).toHaveLength(28);
  });

  test('a bad quote request is 422 with paths', async () => {
    const response = await svc.call('POST', '/v1/pricing/quote', {
      body: { model: LONG_FORM, input: { duration: '4' } },
    });
    expectProblem(response, 'validation_failed');
    expect(response.body.errors.map((e: { path: string }) => e.path)).toContain('input.image_urls');
    expectProblem(
      await svc.call('POST', '/v1/pricing/quote', { body: { model: 'nope', input: {} } }),
      'validation_failed',
    );
  });
});

describe('fault injection', () => {
  test('faults are read and set through the admin endpoint; bad values are 422', async () => {
    const set = await svc.call('PUT', '/v1/admin/faults', {
      body: { responseDelayMs: 5, modelDurationMs: { [LONG_FORM]: 10 } },
      key: TEST_ADMIN_KEY,
    });
    expect(set.status).toBe(200);
    expect((await svc.call('GET', '/v1/admin/faults', { key: TEST_ADMIN_KEY })).body).toMatchObject({
      responseDelayMs: 5,
      modelDurationMs: { [LONG_FORM]: 10 },
    });
    expectProblem(
      await svc.call('PUT', '/v1/admin/faults', { body: { failureRate: 2 }, key: TEST_ADMIN_KEY }),
      'validation_failed',
    );
    expectProblem(
      await svc.call('PUT', '/v1/admin/faults', { body: { nope: true }, key: TEST_ADMIN_KEY }),
      'validation_failed',
    );
  });

  test('injected 429 and 503 on submit carry Retry-After and create no job', async () => {
    const created = svc.service.counters().jobsCreated;
    svc.service.setFaults({ submitErrorRate: 1, submitErrorStatus: 429, submitRetryAfterSeconds: 7 });
    const limited = await submit();
    expectProblem(limited, 'rate_limited');
    expect(limited.headers['retry-after']).toBe('7');
    svc.service.setFaults({ submitErrorStatus: 503 });
    expectProblem(await submit(), 'service_unavailable');
    svc.service.setFaults({ submitErrorStatus: 500 });
    expectProblem(await submit(), 'internal_error');
    expect(svc.service.counters().jobsCreated).toBe(created);
  });

  test('a dropped submit response still creates the job; retrying with the key finds it', async () => {
    svc.service.setFaults({ dropSubmitResponseRate: 1 });
    await expect(submit(input, { 'idempotency-key': 'dropped-1' })).rejects.toThrow();
    svc.service.setFaults({ dropSubmitResponseRate: 0 });
    await waitUntil(() => svc.service.jobs().some((j) => j.idempotencyKey === 'dropped-1'));
    const retried = await submit(input, { 'idempotency-key': 'dropped-1' });
    expect(retried.status).toBe(202);
    expect(retried.body.request_id).toBe(svc.service.jobs().find((j) => j.idempotencyKey === 'dropped-1')!.id);
  });

  test('the service reports every fault it injected, with the request and key it hit (admin only)', async () => {
    const seen = () =>
      svc
        .call('GET', '/v1/admin/faults/injected', { key: TEST_ADMIN_KEY })
        .then((r) => r.body.faults as Array<Record<string, unknown>>);
    const before = (await seen()).length;
    svc.service.setFaults({ submitErrorRate: 1, submitErrorStatus: 503 });
    expectProblem(await submit(input, { 'idempotency-key': 'reported-503' }), 'service_unavailable');
    svc.service.setFaults({ submitErrorRate: 0, dropSubmitResponseRate: 1 });
    await expect(submit(input, { 'idempotency-key': 'reported-drop' })).rejects.toThrow();
    svc.service.setFaults({ dropSubmitResponseRate: 0, failureRate: 1 });
    const failing = await submit(input, { 'idempotency-key': 'reported-fail' });
    await waitForStatus(svc.url, failing.body.request_id, (s) => s === 'FAILED');
    svc.service.setFaults({ failureRate: 0 });
    const dropped = svc.service.jobs().find((j) => j.idempotencyKey === 'reported-drop');
    const faults = (await seen()).slice(before);
    expect(faults).toEqual([
      expect.objectContaining({ kind: 'submit_error', status: 503, requestId: null, idempotencyKey: 'reported-503' }),
      expect.objectContaining({
        kind: 'submit_answer_dropped',
        requestId: dropped?.id,
        idempotencyKey: 'reported-drop',
      }),
      expect.objectContaining({
        kind: 'job_failed',
        requestId: failing.body.request_id,
        idempotencyKey: 'reported-fail',
      }),
    ]);
    expect(svc.service.injectedFaults().slice(before)).toEqual(faults);
    expect((await svc.call('GET', '/v1/admin/faults/injected', { key: TEST_API_KEY })).status).toBe(403);
  });

  test('counters count calls per endpoint', async () => {
    const before = svc.service.counters();
    await svc.call('GET', '/v1/queue/requests/nope/status');
    await svc.call('POST', '/v1/pricing/quote', { body: { model: LONG_FORM, input } });
    const after = svc.service.counters();
    expect(after.statusCalls - before.statusCalls).toBe(1);
    expect(after.quoteCalls - before.quoteCalls).toBe(1);
  });
});

describe('per-second quotes', () => {
  test("are priced on the probed length of the clip, for a data URI and for the service's own output URL", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-clip-'));
    try {
      const clip = path.join(dir, 'clip.mp4');
      await runFfmpeg([
        '-y',
        '-f',
        'lavfi',
        '-i',
        'testsrc=size=64x64:rate=24',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:sample_rate=48000',
        '-t',
        '3',
        '-c:v',
        'libx264',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        '-shortest',
        clip,
      ]);
      const clipUri = `data:video/mp4;base64,${fs.readFileSync(clip).toString('base64')}`;
      const quote = async (model: string, quoteInput: Record<string, unknown>) =>
        (await svc.call('POST', '/v1/pricing/quote', { body: { model, input: quoteInput } })).body;

      const upscale = LOCAL_PER_SECOND_RATES['service-upscale-video-fast'];
      const horizon = LOCAL_PER_SECOND_RATES['service-horizon-studio'];
      expect(await quote('service-upscale-video-fast', { video_url: clipUri })).toEqual({
        model: 'service-upscale-video-fast',
        credits: upscale.standard * 3,
        pricing_unit: 'per-output-second',
        billed_seconds: expect.closeTo(3, 1),
      });
      expect(
        (await quote('service-upscale-video-fast', { video_url: clipUri, processing_speed: 'ultra-fast' })).credits,
      ).toBe(upscale['ultra-fast'] * 3);
      expect((await quote('service-horizon-studio', { video_url: clipUri, audio_url: clipUri })).credits).toBe(
        horizon.standard * 3,
      );

      // A 4 s long-form output, fed back by its own (http, loopback) URL, bills 4 seconds.
      const id = (await submit()).body.request_id;
      await waitForStatus(svc.url, id, (s) => s === 'COMPLETED');
      const output = (await svc.call('GET', `/v1/queue/requests/${id}`)).body.videos[0].url;
      expect((await quote('service-upscale-video-fast', { video_url: output })).credits).toBe(upscale.standard * 4);

      // A submit charges exactly the quote.
      const before = await balance();
      const job = await svc.call('POST', '/v1/queue/service-upscale-video-fast', { body: { video_url: clipUri } });
      expect(job.status).toBe(202);
      expect(await balance()).toBe(before - upscale.standard * 3);
      await svc.call('POST', `/v1/queue/requests/${job.body.request_id}/cancel`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('state machine and configuration', () => {
  test('the transition table allows exactly the documented moves', () => {
    const allowed = JOB_STATES.flatMap((from) =>
      JOB_STATES.filter((to) => canTransition(from, to)).map((to) => `${from}->${to}`),
    );
    expect(allowed.sort()).toEqual([
      'IN_PROGRESS->CANCELLED',
      'IN_PROGRESS->COMPLETED',
      'IN_PROGRESS->FAILED',
      'IN_QUEUE->CANCELLED',
      'IN_QUEUE->IN_PROGRESS',
    ]);
  });

  test('bad options stop the start with every bad field named', async () => {
    await expect(startLocalService({ dataDir: '', port: -1, concurrencyPerModel: 0 })).rejects.toThrow(
      /dataDir[\s\S]*port|port[\s\S]*dataDir/,
    );
    await expect(startTestService({ faults: { failureRate: 3 } })).rejects.toThrow();
  });

  test('the worker entry point reads the same options from REELFLOW_SERVICE_* variables', () => {
    expect(
      loadServiceConfig({
        REELFLOW_SERVICE_DATA_DIR: '/tmp/x',
        REELFLOW_SERVICE_PORT: '8787',
        REELFLOW_SERVICE_API_KEYS: 'k1-aaaaaaaa, k2-bbbbbbbb',
        REELFLOW_SERVICE_CREDITS: '500',
        REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS: 'true',
        REELFLOW_SERVICE_PUBLIC_URL: 'http://127.0.0.1:8787',
      }),
    ).toEqual({
      host: '127.0.0.1',
      dataDir: '/tmp/x',
      port: 8787,
      apiKeys: ['k1-aaaaaaaa', 'k2-bbbbbbbb'],
      credits: 500,
      allowPrivateWebhooks: true,
      publicUrl: 'http://127.0.0.1:8787',
      logger: false,
      render: 'ffmpeg',
      connections: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, idleTimeoutMs: 5_000 },
    });
    expect(() => loadServiceConfig({})).toThrow(/REELFLOW_SERVICE_DATA_DIR/);
    expect(() => loadServiceConfig({ REELFLOW_SERVICE_DATA_DIR: '/x', REELFLOW_SERVICE_PORT: 'abc' })).toThrow(/PORT/);
  });
});
