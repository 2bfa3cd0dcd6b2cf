import * as fs from 'node:fs';
import * as path from 'node:path';
import { LIMITS } from '../../src/contract';
import { verify } from '../../src/contract/signature';
import {
  LONG_FORM,
  PIXEL_PNG,
  TEST_ADMIN_KEY,
  TEST_API_KEY,
  api,
  spawnServiceProcess,
  startReceiver,
  startTestService,
  tempDataDir,
  waitForStatus,
  waitUntil,
  type ServiceProcess,
  type WebhookReceiver,
} from '../helpers/local-service';

/**
 * Crash safety: `reelflow service` runs as a child process and is killed with SIGKILL in the
 * middle of jobs and of a webhook retry schedule, then restarted on the same data directory.
 */

const input = { image_urls: [PIXEL_PNG] };
let dataDir: string;
let processes: ServiceProcess[] = [];
let hook: WebhookReceiver | null = null;

function args(): string[] {
  return [
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--api-key',
    TEST_API_KEY,
    '--admin-key',
    TEST_ADMIN_KEY,
    '--credits',
    '1000',
    '--allow-private-webhooks',
  ];
}

beforeEach(() => {
  dataDir = tempDataDir();
});
afterEach(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  processes = [];
  await hook?.close();
  hook = null;
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function spawnService(): Promise<ServiceProcess> {
  const p = await spawnServiceProcess(args());
  processes.push(p);
  return p;
}

test('SIGKILL during jobs and during a retry schedule: nothing is lost and the ledger balances', async () => {
  // The receiver fails the first four POSTs of each event (retries 1, 2, 4, 8 s apart), so the first event is
  // mid-schedule at the kill: the kill comes a few seconds after its second attempt, the fifth is due 12 s after it.
  const FAILURES = 4;
  const seen = new Map<string, number>();
  hook = await startReceiver((_body, _n, headers) => {
    const eventId = String(headers['service-webhook-id']);
    const n = seen.get(eventId) ?? 0;
    seen.set(eventId, n + 1);
    return n < FAILURES ? 500 : 200;
  });
  const first = await spawnService();
  const endpoint = (await api(first.url, 'POST', '/v1/webhooks/endpoints', { body: { url: hook.url } })).body;

  const completed = (await api(first.url, 'POST', `/v1/queue/${LONG_FORM}`, { body: input })).body.request_id as string;
  await waitForStatus(first.url, completed, (s) => s === 'COMPLETED');
  await waitUntil(() => hook!.received.length === 2, 20_000, 'two failed attempts');

  await api(first.url, 'PUT', '/v1/admin/faults', { body: { modelDurationMs: 120_000 }, key: TEST_ADMIN_KEY });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++)
    ids.push((await api(first.url, 'POST', `/v1/queue/${LONG_FORM}`, { body: input })).body.request_id);
  const [running1, running2, queued] = ids as [string, string, string];
  await waitForStatus(first.url, running2, (s) => s === 'IN_PROGRESS');
  expect((await api(first.url, 'GET', `/v1/queue/requests/${queued}/status`)).body.status).toBe('IN_QUEUE');
  expect((await api(first.url, 'GET', '/v1/account/balance')).body.credits).toBe(1000 - 4 * 80);
  const firstEventId = hook.received[0]!.headers['service-webhook-id'];
  const attemptsOf = () => hook!.received.filter((d) => d.headers['service-webhook-id'] === firstEventId);
  expect(await first.stop('SIGKILL')).toBeNull();
  const killedAt = Date.now();
  // How far the schedule got before the kill (2 unless the machine is very slow); it must not have ended.
  const beforeKill = attemptsOf().length;
  expect(beforeKill).toBeLessThanOrEqual(FAILURES);

  const second = await spawnService();
  // Keys and endpoints survived.
  const endpoints = (await api(second.url, 'GET', '/v1/webhooks/endpoints')).body.endpoints;
  expect(endpoints.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
  // Jobs caught IN_PROGRESS end FAILED and refunded; the queued one runs; the completed one keeps its result.
  for (const id of [running1, running2]) {
    const status = (await api(second.url, 'GET', `/v1/queue/requests/${id}/status`)).body;
    expect(status).toMatchObject({ status: 'FAILED', error: { code: 'service_restarted' } });
  }
  await waitForStatus(second.url, queued, (s) => s === 'COMPLETED');
  expect((await api(second.url, 'GET', `/v1/queue/requests/${completed}`)).body.credits_used).toBe(80);

  // The interrupted schedule resumes where it stopped: the remaining attempts fail until the last succeeds, same event_id throughout.
  await waitUntil(() => attemptsOf().length === FAILURES + 1, 90_000, 'resumed schedule');
  const attempts = attemptsOf();
  expect(attempts.map((d) => d.status)).toEqual([...Array(FAILURES).fill(500), 200]);
  // The first attempt after the restart was due its delay after the last one before the kill (stored on disk), never sooner.
  const resumed = attempts[beforeKill]!;
  expect(resumed.at).toBeGreaterThanOrEqual(killedAt);
  expect(resumed.at - attempts[beforeKill - 1]!.at).toBeGreaterThanOrEqual(
    LIMITS.webhookRetryDelaysSeconds[beforeKill - 1]! * 1000 - 50,
  );
  for (const attempt of attempts)
    expect(verify({ headers: attempt.headers, body: attempt.body, secrets: endpoint.secret }).ok).toBe(true);

  // The ledger balances: seed − charges + refunds = balance, and only the two completed jobs cost.
  const ledger = (await api(second.url, 'GET', '/v1/account/ledger')).body;
  const sum = ledger.entries.reduce((total: number, e: { amount: number }) => total + e.amount, 0);
  expect(sum).toBe(ledger.credits);
  expect(ledger.credits).toBe(1000 - 2 * 80);
  for (const id of [running1, running2]) {
    expect(
      ledger.entries
        .filter((e: { request_id: string }) => e.request_id === id)
        .map((e: { kind: string; amount: number }) => [e.kind, e.amount]),
    ).toEqual([
      ['charge', -80],
      ['refund', 80],
    ]);
  }
  // Only hashes of keys are on disk.
  const journal = fs.readFileSync(path.join(dataDir, 'state', 'journal.jsonl'), 'utf8');
  expect(journal).not.toContain(TEST_API_KEY);

  expect(await second.stop('SIGTERM')).toBe(0);
  expect(second.output()).toContain('reelflow service stopped');
}, 180_000);

test('a journal whose last line was torn by a crash loads without it; damage elsewhere refuses to start', async () => {
  const svc = await startTestService({ dataDir, credits: 500 });
  const id = (await svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: input })).body.request_id;
  await waitForStatus(svc.url, id, (s) => s === 'COMPLETED');
  await svc.service.close();
  const journal = path.join(dataDir, 'state', 'journal.jsonl');
  fs.appendFileSync(journal, '{"t":"ledger","entry":{"seq":99,"kind":"gra');

  const again = await startTestService({ dataDir, credits: 500 });
  expect(again.service.balance()).toBe(420);
  expect(again.service.jobs().map((j) => [j.id, j.status])).toEqual([[id, 'COMPLETED']]);
  await again.service.close();

  fs.writeFileSync(journal, `not json\n${fs.readFileSync(journal, 'utf8')}`);
  await expect(startTestService({ dataDir })).rejects.toThrow(/not a valid journal entry/);
});
