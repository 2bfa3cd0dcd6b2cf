import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_VERSION, LIMITS, webhookEventSchema } from '../../src/contract';
import { verify } from '../../src/contract/signature';
import {
  LONG_FORM,
  PIXEL_PNG,
  startReceiver,
  startTestService,
  TEST_ADMIN_KEY,
  waitForStatus,
  waitUntil,
  type TestService,
  type WebhookReceiver,
} from '../helpers/local-service';

/** Signed webhook deliveries to receivers on loopback, checked with the contract's `verify`. */

const input = { image_urls: [PIXEL_PNG] };
const services: TestService[] = [];
const receivers: WebhookReceiver[] = [];

async function service(options: Parameters<typeof startTestService>[0] = {}): Promise<TestService> {
  const svc = await startTestService(options);
  services.push(svc);
  return svc;
}

async function receiver(respond?: Parameters<typeof startReceiver>[0]): Promise<WebhookReceiver> {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

async function register(svc: TestService, url: string): Promise<{ id: string; secret: string }> {
  const response = await svc.call('POST', '/v1/webhooks/endpoints', { body: { url } });
  expect(response.status).toBe(201);
  return response.body;
}

async function runJob(svc: TestService): Promise<string> {
  const id = (await svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: input })).body.request_id as string;
  await waitForStatus(svc.url, id, (s) => s === 'COMPLETED');
  return id;
}

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

test('endpoints: created with a secret shown once, listed without it, deleted; refused URLs are 422', async () => {
  const svc = await service();
  const hook = await receiver();
  const created = await register(svc, hook.url);
  expect(created.secret).toMatch(/^whsec_/);
  const listed = await svc.call('GET', '/v1/webhooks/endpoints');
  expect(listed.body.endpoints).toEqual([expect.objectContaining({ id: created.id, url: hook.url })]);
  expect(JSON.stringify(listed.body)).not.toContain(created.secret);
  expect((await svc.call('DELETE', `/v1/webhooks/endpoints/${created.id}`)).status).toBe(204);
  expect((await svc.call('DELETE', `/v1/webhooks/endpoints/${created.id}`)).body.code).toBe('not_found');
  expect((await svc.call('POST', '/v1/webhooks/endpoints', { body: { url: 42 } })).body.code).toBe('validation_failed');

  // Without the dev flag the spec's registration rules apply: loopback http is refused.
  const strict = await service({ allowPrivateWebhooks: false });
  const refused = await strict.call('POST', '/v1/webhooks/endpoints', { body: { url: hook.url } });
  expect(refused.status).toBe(422);
  expect(refused.body.code).toBe('webhook_url_refused');
  expect(refused.body.errors[0].path).toBe('url');
});

test('a completed job is delivered once to every endpoint, signed, with every field of the event', async () => {
  const svc = await service();
  const a = await receiver();
  const b = await receiver();
  const endpointA = await register(svc, a.url);
  const endpointB = await register(svc, b.url);
  const id = await runJob(svc);
  await waitUntil(() => a.received.length === 1 && b.received.length === 1, 20_000, 'deliveries');

  for (const [hook, endpoint] of [
    [a, endpointA],
    [b, endpointB],
  ] as const) {
    const delivery = hook.received[0]!;
    expect(verify({ headers: delivery.headers, body: delivery.body, secrets: endpoint.secret })).toMatchObject({
      ok: true,
    });
    const event = webhookEventSchema.parse(JSON.parse(delivery.body.toString('utf8')));
    expect(event).toMatchObject({
      event_type: 'generation.completed',
      api_version: API_VERSION,
      request_id: id,
      status: 'OK',
      error: null,
    });
    expect(delivery.headers['service-webhook-id']).toBe(event.event_id);
    expect(delivery.headers['service-webhook-event-type']).toBe('generation.completed');
    const result = (await svc.call('GET', `/v1/queue/requests/${id}`)).body;
    expect(event.data).toEqual({ ...result, gateway_request_id: id, output_count: result.videos.length });
  }
  // The other endpoint's secret does not verify: each endpoint signs with its own.
  expect(verify({ headers: a.received[0]!.headers, body: a.received[0]!.body, secrets: endpointB.secret }).ok).toBe(
    false,
  );
});

test("the admin clocks say when a job's webhook was first sent: its endpoints' earliest first attempt, after the job completed", async () => {
  const svc = await service();
  const first = await receiver();
  const second = await receiver();
  await register(svc, first.url);
  await register(svc, second.url);
  const id = await runJob(svc);
  await waitUntil(() => first.received.length === 1 && second.received.length === 1, 20_000, 'deliveries');
  await waitUntil(
    () => svc.service.deliveries().every((d) => (d.attemptLog?.length ?? 0) > 0),
    20_000,
    'attempts journalled',
  );
  const clocks = await svc.call('GET', '/v1/admin/jobs', { key: TEST_ADMIN_KEY });
  const job = (clocks.body.jobs as Array<{ id: string; completedAt: number; webhookSentAt: number | null }>).find(
    (j) => j.id === id,
  )!;
  // With two endpoints, the earliest of their first attempts.
  const firstSent = Math.min(...svc.service.deliveries().map((d) => d.attemptLog![0]!.sentAt));
  expect(job.webhookSentAt).toBe(firstSent);
  expect(job.webhookSentAt!).toBeGreaterThanOrEqual(job.completedAt);

  // A job whose outcome no endpoint asked for has none.
  const quiet = await service();
  const unwatched = await runJob(quiet);
  const quietClocks = await quiet.call('GET', '/v1/admin/jobs', { key: TEST_ADMIN_KEY });
  expect((quietClocks.body.jobs as Array<{ id: string }>).find((j) => j.id === unwatched)).toMatchObject({
    webhookSentAt: null,
  });
});

test('408, 425, 429 and 5xx are retried with the same event_id; 400, 401, 404 and 410 are not', async () => {
  const svc = await service();
  const retried = [408, 425, 429, 500, 503];
  const permanent = [400, 401, 404, 410];
  const retryHooks = await Promise.all(retried.map((status) => receiver((_body, n) => (n === 0 ? status : 200))));
  const permanentHooks = await Promise.all(permanent.map((status) => receiver(() => status)));
  for (const hook of [...retryHooks, ...permanentHooks]) await register(svc, hook.url);
  await runJob(svc);

  await waitUntil(() => retryHooks.every((h) => h.received.length === 2), 20_000, 'retries');
  for (const hook of retryHooks) {
    expect(hook.received[0]!.headers['service-webhook-id']).toBe(hook.received[1]!.headers['service-webhook-id']);
    expect(hook.received[1]!.body.equals(hook.received[0]!.body)).toBe(true);
  }
  // The service's own record says the permanent ones are settled after one attempt: no retry is scheduled.
  await waitUntil(
    () => svc.service.deliveries().filter((d) => d.state === 'failed').length === permanent.length,
    20_000,
    'permanent failures',
  );
  const failed = svc.service.deliveries().filter((d) => d.state === 'failed');
  expect(failed.map((d) => d.attempts)).toEqual(permanent.map(() => 1));
  expect(failed.map((d) => d.nextAttemptAt)).toEqual(permanent.map(() => null));
  expect(permanentHooks.map((h) => h.received.length)).toEqual(permanent.map(() => 1));
  // A receiver has its POST a moment before the service journals the answer.
  await waitUntil(
    () => svc.service.deliveries().filter((d) => d.state === 'delivered').length === retried.length,
    20_000,
    'delivered records',
  );
  expect(
    svc.service
      .deliveries()
      .filter((d) => d.state === 'delivered')
      .map((d) => d.attempts),
  ).toEqual(retried.map(() => 2));
});

test('rotation: deliveries carry two v1= entries during the grace period, old and new secret both verify', async () => {
  const svc = await service();
  const hook = await receiver();
  const endpoint = await register(svc, hook.url);
  const rotated = await svc.call('POST', `/v1/webhooks/endpoints/${endpoint.id}/rotate`);
  expect(rotated.status).toBe(200);
  expect(rotated.body.secret).not.toBe(endpoint.secret);
  await runJob(svc);
  await waitUntil(() => hook.received.length === 1, 20_000, 'delivery');
  const delivery = hook.received[0]!;
  const entries = String(delivery.headers['service-webhook-signature']).split(/\s+/);
  expect(entries).toHaveLength(2);
  expect(entries.every((e) => e.startsWith('v1='))).toBe(true);
  expect(verify({ headers: delivery.headers, body: delivery.body, secrets: endpoint.secret }).ok).toBe(true);
  expect(verify({ headers: delivery.headers, body: delivery.body, secrets: rotated.body.secret }).ok).toBe(true);

  // With no grace period the old secret stops signing at once.
  const second = await svc.call('POST', `/v1/webhooks/endpoints/${endpoint.id}/rotate`, { body: { grace_seconds: 0 } });
  await runJob(svc);
  await waitUntil(() => hook.received.length === 2, 20_000, 'second delivery');
  const next = hook.received[1]!;
  expect(String(next.headers['service-webhook-signature']).split(/\s+/)).toHaveLength(1);
  expect(verify({ headers: next.headers, body: next.body, secrets: second.body.secret }).ok).toBe(true);
  expect(verify({ headers: next.headers, body: next.body, secrets: rotated.body.secret }).ok).toBe(false);
});

test('rotation with a grace period: the old secret still verifies within it, and no longer once it ended', async () => {
  const GRACE_SECONDS = 20;
  const svc = await service();
  const hook = await receiver();
  const endpoint = await register(svc, hook.url);
  const rotated = await svc.call('POST', `/v1/webhooks/endpoints/${endpoint.id}/rotate`, {
    body: { grace_seconds: GRACE_SECONDS },
  });
  expect(rotated.status).toBe(200);
  // The service's clock read the rotation before this one did: the grace ends before `graceEndsBy`.
  const graceEndsBy = Date.now() + GRACE_SECONDS * 1000;
  await runJob(svc);
  await waitUntil(() => hook.received.length === 1, 60_000, 'delivery within the grace period');
  await waitUntil(() => (svc.service.deliveries()[0]?.attemptLog?.length ?? 0) > 0, 20_000, 'attempt journalled');
  // A precondition, not a timing claim: the job and its delivery took well under the 20 s grace (5× margin on this machine).
  expect(svc.service.deliveries()[0]!.attemptLog![0]!.sentAt).toBeLessThan(graceEndsBy);
  const within = hook.received[0]!;
  expect(String(within.headers['service-webhook-signature']).split(/\s+/)).toHaveLength(2);
  expect(verify({ headers: within.headers, body: within.body, secrets: endpoint.secret }).ok).toBe(true);
  expect(verify({ headers: within.headers, body: within.body, secrets: rotated.body.secret }).ok).toBe(true);

  // Once the grace period is over (waited for, not raced), the old secret no longer signs.
  await waitUntil(() => Date.now() > graceEndsBy, 60_000, 'the grace period to end');
  await runJob(svc);
  await waitUntil(() => hook.received.length === 2, 60_000, 'delivery after the grace period');
  const after = hook.received[1]!;
  expect(String(after.headers['service-webhook-signature']).split(/\s+/)).toHaveLength(1);
  expect(verify({ headers: after.headers, body: after.body, secrets: rotated.body.secret }).ok).toBe(true);
  expect(verify({ headers: after.headers, body: after.body, secrets: endpoint.secret }).ok).toBe(false);
}, 120_000);

test('failed and cancelled jobs emit events only when the flag is on', async () => {
  const svc = await service();
  const hook = await receiver();
  await register(svc, hook.url);
  svc.service.setFaults({ failureRate: 1 });
  const failedId = (await svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: input })).body.request_id;
  await waitForStatus(svc.url, failedId, (s) => s === 'FAILED');
  expect(svc.service.deliveries()).toHaveLength(0);

  svc.service.setFaults({ failEventsEnabled: true });
  const failed = (await svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: input })).body.request_id;
  await waitForStatus(svc.url, failed, (s) => s === 'FAILED');
  await waitUntil(() => hook.received.length === 1, 20_000, 'failed event');
  svc.service.setFaults({ failureRate: 0, modelDurationMs: 60_000 });
  const cancelled = (await svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: input })).body.request_id;
  await svc.call('POST', `/v1/queue/requests/${cancelled}/cancel`);
  await waitUntil(() => hook.received.length === 2, 20_000, 'cancelled event');
  const [failedEvent, cancelledEvent] = hook.received.map((d) =>
    webhookEventSchema.parse(JSON.parse(d.body.toString('utf8'))),
  );
  expect(failedEvent).toMatchObject({
    event_type: 'generation.failed',
    request_id: failed,
    status: 'ERROR',
    error: { code: 'generation_failed' },
  });
  expect(failedEvent!.data).toMatchObject({ status: 'FAILED', output_count: 0, gateway_request_id: failed });
  expect(cancelledEvent).toMatchObject({
    event_type: 'generation.cancelled',
    request_id: cancelled,
    status: 'CANCELLED',
    error: { code: 'cancelled' },
  });
  expect(cancelledEvent!.data).toMatchObject({ status: 'CANCELLED', output_count: 0, gateway_request_id: cancelled });
});

test('an endpoint registered with events [completed, failed, cancelled] receives failure events; one without them does not', async () => {
  const svc = await service({ faults: { failureRate: 1 } });
  const all = await receiver();
  const completionsOnly = await receiver();
  const created = await svc.call('POST', '/v1/webhooks/endpoints', {
    body: { url: all.url, events: ['generation.completed', 'generation.failed', 'generation.cancelled'] },
  });
  expect(created.status).toBe(201);
  await register(svc, completionsOnly.url);
  const listed = (await svc.call('GET', '/v1/webhooks/endpoints')).body.endpoints as Array<{
    url: string;
    events: string[];
  }>;
  expect(Object.fromEntries(listed.map((e) => [e.url, e.events]))).toEqual({
    [all.url]: ['generation.completed', 'generation.failed', 'generation.cancelled'],
    [completionsOnly.url]: ['generation.completed'],
  });
  const failed = (await svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: input })).body.request_id;
  await waitForStatus(svc.url, failed, (s) => s === 'FAILED');
  await waitUntil(() => all.received.length === 1, 20_000, 'failed event at the subscribed endpoint');
  expect(JSON.parse(all.received[0]!.body.toString('utf8'))).toMatchObject({
    event_type: 'generation.failed',
    request_id: failed,
    error: { code: 'generation_failed', message: expect.any(String) },
  });
  svc.service.setFaults({ failureRate: 0 });
  const completed = await runJob(svc);
  await waitUntil(
    () => completionsOnly.received.length === 1 && all.received.length === 2,
    20_000,
    'completion at both',
  );
  expect(JSON.parse(completionsOnly.received[0]!.body.toString('utf8')).request_id).toBe(completed);
  for (const bad of [['generation.started'], [], ['generation.failed', 'generation.failed']]) {
    const refused = await svc.call('POST', '/v1/webhooks/endpoints', { body: { url: all.url, events: bad } });
    expect({ bad, status: refused.status, code: refused.body.code, path: refused.body.errors?.[0]?.path }).toEqual({
      bad,
      status: 422,
      code: 'validation_failed',
      path: expect.stringMatching(/^events/),
    });
  }
});

test('delivery faults: dropped events are never sent, duplicated ones arrive twice with one event_id', async () => {
  const svc = await service({ faults: { dropDeliveryRate: 1 } });
  const hook = await receiver();
  await register(svc, hook.url);
  await runJob(svc);
  await waitUntil(() => svc.service.deliveries().length === 1, 20_000, 'delivery record');
  expect(svc.service.deliveries()[0]!.state).toBe('dropped');

  svc.service.setFaults({ dropDeliveryRate: 0, duplicateDeliveryRate: 1 });
  await runJob(svc);
  await waitUntil(() => hook.received.length === 2, 20_000, 'duplicate');
  expect(hook.received[0]!.headers['service-webhook-id']).toBe(hook.received[1]!.headers['service-webhook-id']);
});

test('delivery delay holds the first attempt back', async () => {
  const svc = await service({ faults: { deliveryDelayMs: 300 } });
  const hook = await receiver();
  await register(svc, hook.url);
  const id = await runJob(svc);
  await waitUntil(() => hook.received.length === 1, 20_000, 'delayed delivery');
  const completedAt = svc.service.jobs().find((j) => j.id === id)!.completedAt!;
  // Never early: a lower bound only (a loaded machine may send later, never sooner).
  expect(hook.received[0]!.at - completedAt).toBeGreaterThanOrEqual(300);
  // The service journals an attempt when its answer has come back, a moment after the receiver saw it.
  await waitUntil(() => (svc.service.deliveries()[0]?.attemptLog?.length ?? 0) > 0, 20_000, 'attempt journalled');
  const [first] = svc.service.deliveries()[0]!.attemptLog!;
  expect(first!.dueAt - svc.service.deliveries()[0]!.createdAt).toBe(300);
  expect(first!.sentAt).toBeGreaterThanOrEqual(first!.dueAt);
});

test(`a receiver that always fails gets exactly ${LIMITS.webhookMaxAttempts} attempts, 1, 2, 4, 8, 16 s apart`, async () => {
  const svc = await service();
  const hook = await receiver(() => 500);
  await register(svc, hook.url);
  await runJob(svc);
  await waitUntil(() => svc.service.deliveries()[0]?.state === 'failed', 90_000, 'retries exhausted');
  expect(hook.received).toHaveLength(LIMITS.webhookMaxAttempts);
  expect(new Set(hook.received.map((d) => d.headers['service-webhook-id'])).size).toBe(1);
  // The schedule from the service's own journal of its attempts, not from arrival times at the receiver:
  // each retry was due exactly its delay after the previous attempt ended, and was sent when due, never before.
  const log = svc.service.deliveries()[0]!.attemptLog!;
  expect(log.map((a) => a.status)).toEqual(Array(LIMITS.webhookMaxAttempts).fill(500));
  expect(log.slice(1).map((a, i) => (a.dueAt - log[i]!.endedAt) / 1000)).toEqual(LIMITS.webhookRetryDelaysSeconds);
  expect(log.map((a) => a.nextAttemptAt)).toEqual([...log.slice(1).map((a) => a.dueAt), null]);
  for (const attempt of log) expect(attempt.sentAt).toBeGreaterThanOrEqual(attempt.dueAt);
  expect(svc.service.deliveries()[0]).toMatchObject({
    attempts: 6,
    state: 'failed',
    nextAttemptAt: null,
    lastStatus: 500,
  });
}, 120_000);

test('reordering: each delivery waits a random extra time, so later events overtake earlier ones', async () => {
  // deliveryDelayMs 2000 with reordering: every first attempt is due 2 s plus a random 0–2 s after its job ended.
  const svc = await service({ concurrencyPerModel: 16, faults: { deliveryDelayMs: 2000, reorderDeliveries: true } });
  const hook = await receiver();
  await register(svc, hook.url);
  const ids = await Promise.all(
    Array.from(
      { length: 16 },
      async () => (await svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: input })).body.request_id as string,
    ),
  );
  await waitUntil(() => hook.received.length === ids.length, 120_000, 'every delivery');
  await waitUntil(
    () => svc.service.deliveries().every((d) => (d.attemptLog?.length ?? 0) > 0),
    20_000,
    'every attempt journalled',
  );
  // The waits as the service scheduled them (its journal), not as a loaded machine happened to deliver them.
  const deliveries = svc.service.deliveries();
  const waits = deliveries.map((d) => d.attemptLog![0]!.dueAt - d.createdAt);
  for (const wait of waits) {
    expect(wait).toBeGreaterThanOrEqual(2000);
    expect(wait).toBeLessThan(4000);
  }
  for (const d of deliveries) expect(d.attemptLog![0]!.sentAt).toBeGreaterThanOrEqual(d.attemptLog![0]!.dueAt);
  // Uniform extra waits over 2 s: 16 of them inside 300 ms of each other is a ~1e-11 event.
  expect(Math.max(...waits) - Math.min(...waits)).toBeGreaterThan(300);
  // Later events overtake earlier ones: the order the service sent them is not the order its jobs ended.
  const completedAt = new Map(svc.service.jobs().map((j) => [j.id, j.completedAt!]));
  const bySending = [...deliveries]
    .sort((a, b) => a.attemptLog![0]!.sentAt - b.attemptLog![0]!.sentAt)
    .map((d) => d.requestId);
  const byCompletion = [...ids].sort((a, b) => completedAt.get(a)! - completedAt.get(b)!);
  expect(bySending).not.toEqual(byCompletion);
}, 180_000);

test(`a receiver slower than the ${LIMITS.webhookHandlerBudgetSeconds} s handler budget is cut off and retried with the same event`, async () => {
  const svc = await service();
  // First attempt: hold the request open past the budget; second: answer at once.
  const arrivals: Array<{ at: number; eventId: string }> = [];
  const slow = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      // Registration probes the URL (HEAD) for redirects first; only deliveries (POST) count.
      if (req.method !== 'POST') return void res.writeHead(200).end();
      arrivals.push({ at: Date.now(), eventId: String(req.headers['service-webhook-id']) });
      if (arrivals.length === 1) setTimeout(() => res.writeHead(200).end(), 60_000).unref();
      else res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  try {
    await register(svc, `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`);
    await runJob(svc);
    await waitUntil(() => svc.service.deliveries()[0]?.state === 'delivered', 60_000, 'second attempt');
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]!.eventId).toBe(arrivals[0]!.eventId);
    // Cut off at the budget (the 60 s answer never awaited), then retried the first retry delay (1 s) later: from the service's journal.
    const [cut, retry] = svc.service.deliveries()[0]!.attemptLog!;
    expect(cut!.status).toBeNull();
    expect(cut!.endedAt - cut!.sentAt).toBeGreaterThanOrEqual(LIMITS.webhookHandlerBudgetSeconds * 1000 - 50);
    // Cut at the budget, not at the receiver's 60 s answer (5× the budget and more).
    expect(cut!.endedAt - cut!.sentAt).toBeLessThan(60_000);
    expect(retry!.dueAt - cut!.endedAt).toBe(LIMITS.webhookRetryDelaysSeconds[0]! * 1000);
    expect(svc.service.deliveries()[0]).toMatchObject({ attempts: 2, state: 'delivered', lastStatus: 200 });
  } finally {
    slow.closeAllConnections();
    await new Promise<void>((resolve) => slow.close(() => resolve()));
  }
}, 90_000);
