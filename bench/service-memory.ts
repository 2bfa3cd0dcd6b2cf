/**
 * Memory of the local service under many jobs with large inline inputs (a script, not a test):
 * `npx tsx bench/service-memory.ts`.
 *
 * Starts the service's process entry point (`src/workers/local-service.ts`) as a child with `--expose-gc`,
 * keeps every job queued (the first one runs for an hour: `modelDurationMs`), registers a webhook
 * endpoint, and submits BENCH_MEMORY_N jobs (default 2000) whose input is a ~1 MiB PNG as a data
 * URI. After 100 jobs and after all of them it asks the child for its memory after a full GC
 * (heap used, RSS); then cancels every job (refund records) and measures again; then restarts the
 * service on the same directory (journal replay) and measures once more. The figure that matters is
 * the ratio at N against 100 (the issue asks for within 2x). Results go to .bench/service-memory.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runFfmpeg } from '../src/media/ffmpeg';
import { api, LONG_FORM, startReceiver, TEST_ADMIN_KEY, TEST_API_KEY } from '../test/helpers/local-service';
import { runBench, writeBenchJson } from './bench-output';

const N = Number(process.env.BENCH_MEMORY_N ?? 2000);
const FIRST = 100;
const PARALLEL = 4;

interface Memory {
  heapUsedMiB: number;
  rssMiB: number;
}

interface Child {
  url: string;
  process: ChildProcess;
  measure(): Promise<Memory>;
  stop(): Promise<void>;
}

/** The child: the real entry point, plus a memory probe on stdin ("m" → one JSON line after a full GC). */
const CHILD_SOURCE = `
const { runService } = require(${JSON.stringify(path.resolve(__dirname, '..', 'src', 'workers', 'local-service.ts'))});
runService().then(() => {
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', () => {
    global.gc();
    global.gc();
    const m = process.memoryUsage();
    console.log('MEMORY ' + JSON.stringify({ heapUsedMiB: +(m.heapUsed / 2 ** 20).toFixed(1), rssMiB: +(m.rss / 2 ** 20).toFixed(1) }));
  });
});
`;

async function startChild(dataDir: string): Promise<Child> {
  const child = spawn(process.execPath, ['--expose-gc', '-r', 'tsx/cjs', '-e', CHILD_SOURCE], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: {
      ...process.env,
      REELFLOW_SERVICE_DATA_DIR: dataDir,
      REELFLOW_SERVICE_API_KEYS: TEST_API_KEY,
      REELFLOW_SERVICE_ADMIN_KEY: TEST_ADMIN_KEY,
      REELFLOW_SERVICE_CREDITS: '1000000000',
      REELFLOW_SERVICE_CONCURRENCY: '1',
      REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS: '1',
    },
  });
  let buffer = '';
  // The service prints other lines too (data directory, warnings): each waiter takes the first line it matches.
  const waiters: Array<{ match: RegExp; resolve: (line: string) => void }> = [];
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buffer += chunk;
    let index: number;
    while ((index = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, index);
      buffer = buffer.slice(index + 1);
      const waiter = waiters.findIndex((w) => w.match.test(line));
      if (waiter >= 0) waiters.splice(waiter, 1)[0]!.resolve(line);
    }
  });
  const next = (match: RegExp) => new Promise<string>((resolve) => waiters.push({ match, resolve }));
  const first = await next(/listening on /);
  const url = /listening on (\S+)/.exec(first)?.[1];
  if (!url) throw new Error(`service did not start: ${first}`);
  return {
    url,
    process: child,
    measure: async () => {
      const line = next(/^MEMORY /);
      child.stdin!.write('m\n');
      return JSON.parse((await line).replace(/^MEMORY /, '')) as Memory;
    },
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function submitUpTo(url: string, target: number, input: object, ids: string[]): Promise<void> {
  const worker = async () => {
    while (ids.length < target) {
      ids.push('');
      const response = await api(url, 'POST', `/v1/queue/${LONG_FORM}`, { body: input });
      if (response.status !== 202) throw new Error(`submit: HTTP ${response.status} ${JSON.stringify(response.body)}`);
      ids[ids.indexOf('')] = response.body.request_id;
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}

function dirBytes(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

async function main(): Promise<void> {
  const started = Date.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-memory-'));
  const png = path.join(dataDir, 'input.png');
  await runFfmpeg([
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    "nullsrc=s=648x648,format=rgb24,geq=r='random(1)*255':g='random(2)*255':b='random(3)*255'",
    '-frames:v',
    '1',
    png,
  ]);
  const pngBytes = fs.statSync(png).size;
  const input = { image_urls: [`data:image/png;base64,${fs.readFileSync(png).toString('base64')}`] };
  const hook = await startReceiver();
  let child = await startChild(dataDir);
  const figures: Record<string, unknown> = {
    n: N,
    first: FIRST,
    inputBytes: pngBytes,
    conditions: `${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)} at start (shared machine)`,
  };
  try {
    await api(child.url, 'PUT', '/v1/admin/faults', { key: TEST_ADMIN_KEY, body: { modelDurationMs: 3_600_000 } });
    await api(child.url, 'POST', '/v1/webhooks/endpoints', { body: { url: hook.url } });
    const idle = await child.measure();
    const ids: string[] = [];
    await submitUpTo(child.url, FIRST, input, ids);
    const atFirst = await child.measure();
    console.log(`after ${FIRST} jobs: heap ${atFirst.heapUsedMiB} MiB, RSS ${atFirst.rssMiB} MiB`);
    await submitUpTo(child.url, N, input, ids);
    const atN = await child.measure();
    console.log(`after ${N} jobs: heap ${atN.heapUsedMiB} MiB, RSS ${atN.rssMiB} MiB`);
    const queuedInputs = dirBytes(path.join(dataDir, 'inputs'));
    for (const id of ids) await api(child.url, 'POST', `/v1/queue/requests/${id}/cancel`);
    const settled = await child.measure();
    await child.stop();
    child = await startChild(dataDir);
    const restarted = await child.measure();
    Object.assign(figures, {
      idle,
      atFirst,
      atN,
      afterCancellingAll: settled,
      afterRestart: restarted,
      heapRatio: +(atN.heapUsedMiB / atFirst.heapUsedMiB).toFixed(2),
      rssRatio: +(atN.rssMiB / atFirst.rssMiB).toFixed(2),
      inlineInputMiB: +((N * pngBytes * 4) / 3 / 2 ** 20).toFixed(0),
      inputsOnDiskWhileQueuedMiB: +(queuedInputs / 2 ** 20).toFixed(0),
      inputsOnDiskAfterCancelMiB: +(dirBytes(path.join(dataDir, 'inputs')) / 2 ** 20).toFixed(1),
      journalKiB: +(fs.statSync(path.join(dataDir, 'state', 'journal.jsonl')).size / 1024).toFixed(0),
      seconds: Math.round((Date.now() - started) / 1000),
    });
  } finally {
    await child.stop().catch(() => undefined);
    await hook.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(figures, null, 2));
  console.log(`memory at ${N} jobs vs ${FIRST}: heap x${String(figures.heapRatio)}, RSS x${String(figures.rssRatio)}`);
  writeBenchJson('service-memory', figures);
}

runBench(main);
