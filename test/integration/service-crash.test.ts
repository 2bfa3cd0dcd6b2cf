import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  LONG_FORM,
  PIXEL_PNG,
  TEST_API_KEY,
  api,
  spawnServiceProcess,
  spawnServiceWorker,
  startReceiver,
  tempDataDir,
  type ServiceProcess,
  type WebhookReceiver,
} from '../helpers/local-service';

/**
 * Acknowledged writes survive SIGKILL at any point. A child `reelflow service` takes a burst of
 * mixed writes (submits with and without Idempotency-Key, key creations, endpoint registrations
 * and deletions) from a few concurrent clients and is SIGKILLed at a random moment, 20 times in a
 * row on the same data directory. After every restart the service starts, and every write that
 * was answered 2xx is there. During one burst a second service is started on the same directory:
 * it exits non-zero naming the holder, and the first loses nothing.
 */

const ROUNDS = 20;
/** https (so the submit is valid) on a loopback port where nothing listens: the render fails at once. */
const UNSERVED_IMAGE = 'https://127.0.0.1:9/missing.png';
const CLIENTS = 4;

let dataDir: string;
let current: ServiceProcess | null = null;
let hook: WebhookReceiver | null = null;

afterAll(async () => {
  await current?.stop('SIGKILL');
  await hook?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Writes the service acknowledged, to be found after every restart. */
const acked = {
  jobs: new Map<string, { key: string | null; image: string }>(), // request id → Idempotency-Key and input
  keys: new Map<string, string>(), // key id → key
  endpoints: new Set<string>(),
  deletedEndpoints: new Set<string>(),
};

async function burst(url: string, stop: { now: boolean }, round: number): Promise<void> {
  let n = 0;
  const client = async (c: number) => {
    while (!stop.now) {
      const i = n++;
      const pick = i % 10;
      try {
        if (pick < 6) {
          const key = pick % 2 === 0 ? `r${round}-c${c}-${i}` : null;
          // One job in six renders (ffmpeg, a completion, webhooks); the others fail fast on an
          // input nobody serves (a transition and a refund), so renders do not crowd the test.
          const image = pick === 0 ? PIXEL_PNG : UNSERVED_IMAGE;
          const response = await api(url, 'POST', `/v1/queue/${LONG_FORM}`, {
            body: { image_urls: [image] },
            ...(key ? { headers: { 'idempotency-key': key } } : {}),
          });
          if (response.status === 202) {
            acked.jobs.set(response.body.request_id, { key, image });
            fresh.jobs.add(response.body.request_id);
          }
        } else if (pick < 9) {
          const response = await api(url, 'POST', '/v1/account/keys');
          if (response.status === 201) {
            acked.keys.set(response.body.id, response.body.key);
            fresh.keys.add(response.body.id);
          }
        } else {
          const response = await api(url, 'POST', '/v1/webhooks/endpoints', { body: { url: hook!.url } });
          if (response.status === 201) acked.endpoints.add(response.body.id);
        }
      } catch {
        // The connection died with the process: this write was never acknowledged.
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
}

/** Writes acknowledged since the last check: looked at one by one; older ones through the lists. */
const fresh = { jobs: new Set<string>(), keys: new Set<string>() };

async function verify(url: string): Promise<void> {
  const missing: string[] = [];
  // Every acknowledged job was charged: the ledger lists them all in one answer.
  const ledger = (await api(url, 'GET', '/v1/account/ledger')).body.entries as {
    kind: string;
    request_id: string | null;
  }[];
  const charged = new Set(ledger.filter((e) => e.kind === 'charge').map((e) => e.request_id));
  for (const id of acked.jobs.keys()) if (!charged.has(id)) missing.push(`job ${id} (no charge in the ledger)`);
  const keys = (await api(url, 'GET', '/v1/account/keys')).body.keys as { id: string; revoked_at: string | null }[];
  const liveKeys = new Set(keys.filter((k) => k.revoked_at === null).map((k) => k.id));
  for (const id of acked.keys.keys()) if (!liveKeys.has(id)) missing.push(`key ${id} (not listed)`);
  for (const id of fresh.jobs) {
    const status = await api(url, 'GET', `/v1/queue/requests/${id}/status`);
    if (status.status !== 200) missing.push(`job ${id}: ${status.status}`);
    const { key, image } = acked.jobs.get(id)!;
    if (key) {
      // The key still names that job: a replay returns it rather than creating another.
      const replay = await api(url, 'POST', `/v1/queue/${LONG_FORM}`, {
        body: { image_urls: [image] },
        headers: { 'idempotency-key': key },
      });
      if (replay.body?.request_id !== id)
        missing.push(`idempotency key ${key}: ${replay.status} ${replay.body?.request_id}`);
    }
  }
  for (const id of fresh.keys) {
    const balance = await api(url, 'GET', '/v1/account/balance', { key: acked.keys.get(id)! });
    if (balance.status !== 200) missing.push(`key ${id}: ${balance.status}`);
  }
  fresh.jobs.clear();
  fresh.keys.clear();
  const listed = new Set<string>(
    ((await api(url, 'GET', '/v1/webhooks/endpoints')).body.endpoints as { id: string }[]).map((e) => e.id),
  );
  for (const id of acked.endpoints) if (!listed.has(id)) missing.push(`endpoint ${id}`);
  for (const id of acked.deletedEndpoints) if (listed.has(id)) missing.push(`deleted endpoint ${id} is back`);
  expect(missing).toEqual([]);
  // Keep deliveries bounded: all but the newest endpoint are deleted (a write that must stick too).
  for (const id of [...acked.endpoints].slice(0, -1)) {
    const response = await api(url, 'DELETE', `/v1/webhooks/endpoints/${id}`);
    if (response.status === 204) {
      acked.endpoints.delete(id);
      acked.deletedEndpoints.add(id);
    }
  }
}

test(`${ROUNDS} SIGKILLs under a burst of writes lose no acknowledged write; a second service on the directory is refused`, async () => {
  dataDir = tempDataDir();
  hook = await startReceiver();
  const env = {
    REELFLOW_SERVICE_DATA_DIR: dataDir,
    REELFLOW_SERVICE_API_KEYS: TEST_API_KEY,
    REELFLOW_SERVICE_CREDITS: '100000000',
    REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS: '1',
    REELFLOW_SERVICE_CONCURRENCY: '1',
  };
  let secondRefused = false;
  for (let round = 0; round < ROUNDS; round++) {
    current = await spawnServiceWorker(env);
    await verify(current.url);
    const stop = { now: false };
    const writing = burst(current.url, stop, round);
    if (round === 3) {
      // A second service on the same directory, mid-burst, started the way a user would.
      const pid = current.child.pid;
      const second = await spawnServiceProcess(['--port', '0', '--data-dir', dataDir, '--api-key', TEST_API_KEY]).then(
        (p) => p.stop('SIGKILL').then(() => 'started'),
        (error: Error) => error.message,
      );
      expect(second).toMatch(/exited with [1-9]/);
      expect(second).toContain(`in use by another reelflow service (pid ${pid}`);
      secondRefused = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 600));
    expect(await current.stop('SIGKILL')).toBeNull();
    stop.now = true;
    await writing;
    current = null;
  }
  current = await spawnServiceWorker(env);
  await verify(current.url);
  expect(secondRefused).toBe(true);
  // The burst really wrote: hundreds of acknowledged writes of every kind went through the kills.
  expect(acked.jobs.size).toBeGreaterThan(ROUNDS * 3);
  expect(acked.keys.size).toBeGreaterThan(ROUNDS);
  expect(acked.endpoints.size + acked.deletedEndpoints.size).toBeGreaterThan(ROUNDS / 2);
  // Compaction at every start keeps one snapshot plus this run's records; nothing inline grows it.
  const journal = fs.statSync(path.join(dataDir, 'state', 'journal.jsonl')).size;
  expect(journal).toBeLessThan(8 * 1024 * 1024);
}, 600_000);
