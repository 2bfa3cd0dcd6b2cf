import { generationRequestSchema, problemSchema } from '../../src/contract';
import { LONG_FORM, PIXEL_PNG, startTestService, waitUntil, type TestService } from '../helpers/local-service';

/** The local extension `GET /v1/queue/requests?idempotency_key=` and the account ledger, over real HTTP. */

let svc: TestService;
const input = { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' };

beforeAll(async () => {
  svc = await startTestService({ credits: 10_000 });
});
afterAll(async () => {
  await svc?.close();
});

test('a key whose submit answer was dropped is found by the lookup, with its credits; the ledger names its charge', async () => {
  svc.service.setFaults({ dropSubmitResponseRate: 1 });
  await expect(
    svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: input, headers: { 'idempotency-key': 'lookup-1' } }),
  ).rejects.toThrow();
  svc.service.setFaults({ dropSubmitResponseRate: 0 });
  await waitUntil(() => svc.service.jobs().some((j) => j.idempotencyKey === 'lookup-1'));
  const job = svc.service.jobs().find((j) => j.idempotencyKey === 'lookup-1')!;

  const found = await svc.call('GET', '/v1/queue/requests?idempotency_key=lookup-1');
  expect(found.status).toBe(200);
  expect(found.body.idempotency_key).toBe('lookup-1');
  expect(found.body.requests).toHaveLength(1);
  const entry = found.body.requests[0];
  expect(generationRequestSchema.parse(entry).request_id).toBe(job.id);
  expect(entry).toMatchObject({
    idempotency_key: 'lookup-1',
    credits_charged: job.creditsCharged,
    credits_refunded: 0,
  });
  expect(Number.isNaN(Date.parse(entry.submitted_at))).toBe(false);

  const ledger = await svc.call('GET', '/v1/account/ledger');
  expect(ledger.body.entries).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ kind: 'charge', request_id: job.id, amount: -job.creditsCharged }),
    ]),
  );
});

test('an unknown key finds nothing; a missing key is a 422 naming the parameter', async () => {
  const none = await svc.call('GET', '/v1/queue/requests?idempotency_key=never-used');
  expect(none.status).toBe(200);
  expect(none.body.requests).toEqual([]);
  const missing = await svc.call('GET', '/v1/queue/requests');
  expect(missing.status).toBe(422);
  expect(problemSchema.parse(missing.body).code).toBe('validation_failed');
  expect(missing.body.errors).toEqual([expect.objectContaining({ path: 'idempotency_key' })]);
});

test('the lookup needs an API key like every /v1 route', async () => {
  const response = await svc.call('GET', '/v1/queue/requests?idempotency_key=x', { key: null });
  expect(response.status).toBe(401);
});
