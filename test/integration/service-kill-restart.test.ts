import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LONG_FORM, TEST_API_KEY, api, processState, tempDataDir } from '../helpers/local-service';

/**
 * `kill -9` and an immediate restart, 20 times on one data directory. Each service runs under a
 * parent that never reaps it (`exec sleep`), so the killed process stays a zombie while its successor
 * starts — the case a pid-based lock (`kill(pid, 0)` succeeds on a zombie) refused. Every restart must
 * start, every write acknowledged before the kill must be there after it, and a second service on the
 * directory while one is alive must still be refused.
 */

const CYCLES = 20;
const ENTRY = path.join(__dirname, '..', '..', 'src', 'workers', 'local-service.ts');
/** https (a valid submit) where nothing listens: the job fails at once, refunded; no render work. */
const UNSERVED_IMAGE = 'https://127.0.0.1:9/missing.png';

interface Unreaped {
  pid: number;
  url: string;
  /** The `exec sleep` parent, killed at the end (init then reaps the zombies). */
  parent: ChildProcess;
}

const parents: ChildProcess[] = [];
let dataDir: string;

afterAll(() => {
  for (const parent of parents) parent.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Starts the service entry point under a parent that will never reap it; resolves once it listens. */
function startUnreaped(env: Record<string, string>): Promise<Unreaped> {
  const parent = spawn(
    'bash',
    ['-c', '"$0" -r tsx/cjs "$1" & echo "pid $!"; exec sleep 3600', process.execPath, ENTRY],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  parents.push(parent);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const pid = /pid (\d+)/.exec(output)?.[1];
      const url = /listening on (\S+)/.exec(output)?.[1];
      if (pid && url) {
        clearTimeout(timer);
        resolve({ pid: Number(pid), url, parent });
      } else if (pid && /reelflow service: /.test(output)) {
        clearTimeout(timer);
        reject(new Error(`service refused to start:\n${output}`));
      }
    };
    parent.stdout!.on('data', onData);
    parent.stderr!.on('data', onData);
  });
}

test(`${CYCLES} cycles of kill -9 and an immediate restart (the dead one still a zombie): every restart starts, no acknowledged write is lost`, async () => {
  dataDir = tempDataDir();
  const env = {
    REELFLOW_SERVICE_DATA_DIR: dataDir,
    REELFLOW_SERVICE_API_KEYS: TEST_API_KEY,
    REELFLOW_SERVICE_CREDITS: '100000000',
    REELFLOW_SERVICE_PORT: '0',
    REELFLOW_SERVICE_CONCURRENCY: '1',
  };
  const ackedJobs = new Map<string, string>(); // request id → Idempotency-Key
  const ackedKeys: string[] = [];
  let current = await startUnreaped(env);
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    // Every write acknowledged so far is there.
    const ledger = (await api(current.url, 'GET', '/v1/account/ledger')).body.entries as {
      kind: string;
      request_id: string | null;
    }[];
    const charged = new Set(ledger.filter((e) => e.kind === 'charge').map((e) => e.request_id));
    expect([...ackedJobs.keys()].filter((id) => !charged.has(id))).toEqual([]);
    const keys = (await api(current.url, 'GET', '/v1/account/keys')).body.keys as { id: string }[];
    const listed = new Set(keys.map((k) => k.id));
    expect(ackedKeys.filter((id) => !listed.has(id))).toEqual([]);
    for (const [id, key] of [...ackedJobs].slice(-3)) {
      const replay = await api(current.url, 'POST', `/v1/queue/${LONG_FORM}`, {
        body: { image_urls: [UNSERVED_IMAGE] },
        headers: { 'idempotency-key': key },
      });
      expect(replay.body?.request_id).toBe(id);
    }

    // New writes, each acknowledged before the kill.
    for (let i = 0; i < 3; i++) {
      const key = `cycle-${cycle}-${i}`;
      const submit = await api(current.url, 'POST', `/v1/queue/${LONG_FORM}`, {
        body: { image_urls: [UNSERVED_IMAGE] },
        headers: { 'idempotency-key': key },
      });
      expect(submit.status).toBe(202);
      ackedJobs.set(submit.body.request_id, key);
    }
    const created = await api(current.url, 'POST', '/v1/account/keys');
    expect(created.status).toBe(201);
    ackedKeys.push(created.body.id);

    if (cycle === 0) {
      // Two live services on one directory: the second is still refused, naming the first.
      const second = await startUnreaped(env).then(
        () => 'started',
        (error: Error) => error.message,
      );
      expect(second).toContain(`in use by another reelflow service (pid ${current.pid}`);
    }

    process.kill(current.pid, 'SIGKILL');
    const killedPid = current.pid;
    current = await startUnreaped(env);
    // The predecessor was never reaped: it is a zombie (or, at worst, still exiting) while this one runs.
    expect(['Z', 'X', 'D']).toContain(processState(killedPid));
  }
  expect(ackedJobs.size).toBe(CYCLES * 3);
  process.kill(current.pid, 'SIGKILL');
}, 300_000);
