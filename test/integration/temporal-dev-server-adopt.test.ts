import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devServerRecordFile, type DevServerRecord } from '../../src/stack/dev-server-record';
import { freePort, processAlive } from '../../src/stack/stack-state';
import { isListening, startTemporalDevServer } from '../../src/stack/temporal-dev-server';

/**
 * After a kill -9 of the process that started it (`reelflow dev`), a real Temporal dev server runs
 * on; the next start on the same state directory adopts it and stops it when it stops. A server
 * nobody recorded is used and left running.
 */

const ROOT = join(__dirname, '..', '..');
let dir: string;
const leftovers: number[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'reelflow-dev-adopt-'));
});

afterAll(() => {
  for (const pid of leftovers)
    if (processAlive(pid))
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the dev server from a separate Node process (as `reelflow dev` does) and resolves once it listens. */
function startInChild(options: { dbFile: string; logFile: string; port: number; uiPort: number }) {
  const script = `
    require('tsx/cjs');
    const { startTemporalDevServer } = require(${JSON.stringify(join(ROOT, 'src', 'stack', 'temporal-dev-server.ts'))});
    startTemporalDevServer(${JSON.stringify(options)}).then(
      () => { process.stdout.write('listening\\n'); setInterval(() => undefined, 60_000); },
      (error) => { console.error(error); process.exit(1); },
    );`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
    child.once('exit', (code) => reject(new Error(`the starting process exited (${code})`)));
  });
  return { child, ready };
}

it('adopts the dev server a killed process left running, and stops it when it stops', async () => {
  const options = {
    dbFile: join(dir, 'temporal', 'dev.sqlite'),
    logFile: join(dir, 'logs', 'temporal.log'),
    port: await freePort(),
    uiPort: await freePort(),
  };
  const { child, ready } = startInChild(options);
  await ready;
  const record = JSON.parse(readFileSync(devServerRecordFile(options.dbFile), 'utf8')) as DevServerRecord;
  leftovers.push(record.pid);
  expect(record).toMatchObject({ owner: child.pid, address: `127.0.0.1:${options.port}` });

  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  // The orphan serves on.
  expect(processAlive(record.pid)).toBe(true);
  expect(await isListening('127.0.0.1', options.port)).toBe(true);

  const server = await startTemporalDevServer(options);
  expect({ startedHere: server.startedHere, adoptedPid: server.adoptedPid }).toEqual({
    startedHere: false,
    adoptedPid: record.pid,
  });
  // This process owns it now: a second crash would leave it adoptable again.
  expect(JSON.parse(readFileSync(devServerRecordFile(options.dbFile), 'utf8'))).toMatchObject({
    pid: record.pid,
    owner: process.pid,
  });
  await server.stop();
  expect(processAlive(record.pid)).toBe(false);
  expect(await isListening('127.0.0.1', options.port)).toBe(false);
}, 120_000);

it('uses a server nobody recorded and leaves it running', async () => {
  const other = createServer();
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  try {
    const port = (other.address() as AddressInfo).port;
    const server = await startTemporalDevServer({
      dbFile: join(dir, 'elsewhere', 'dev.sqlite'),
      logFile: join(dir, 'logs', 'elsewhere.log'),
      port,
    });
    expect({ startedHere: server.startedHere, adoptedPid: server.adoptedPid }).toEqual({
      startedHere: false,
      adoptedPid: undefined,
    });
    await server.stop();
    expect(await isListening('127.0.0.1', port)).toBe(true);
  } finally {
    await new Promise<void>((resolve) => other.close(() => resolve()));
  }
});
