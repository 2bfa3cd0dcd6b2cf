import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { WorkflowNotFoundError } from '@temporalio/client';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { routeWorkflowId } from '../../src/workflows/definitions';
import { deliver, makeEvent } from './bridge-fixtures';

/** `reelflow bridge` as a user runs it: a real process, real HTTP, a real Temporal dev server. */

const BIN = join(__dirname, '..', '..', 'bin', 'reelflow.js');
const ENTRY = join(__dirname, '..', '..', 'src', 'workers', 'bridge.ts');
const SECRET = 'whsec_cli_0123456789';
let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await startDevServer();
});

afterAll(async () => {
  await env?.teardown();
});

function run(
  args: string[],
  extraEnv: Record<string, string>,
): { child: ChildProcessWithoutNullStreams; stdout: () => string; stderr: () => string; exit: Promise<number | null> } {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, REELFLOW_LOG_LEVEL: 'warn', ...extraEnv };
  // The test's own environment must not leak a configuration into the child.
  if (!('REELFLOW_WEBHOOK_SECRETS' in extraEnv)) delete childEnv.REELFLOW_WEBHOOK_SECRETS;
  const argv = args[0] === '--entry' ? ['-r', 'tsx/cjs', ENTRY, ...args.slice(1)] : [BIN, ...args];
  const child = spawn(process.execPath, argv, { env: childEnv });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

function listeningUrl(proc: ReturnType<typeof run>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    proc.child.stdout.on('data', () => {
      const match = /reelflow bridge listening on (http:\/\/\S+)/.exec(proc.stdout());
      if (match?.[1]) resolve(match[1]);
    });
    void proc.exit.then((code) => reject(new Error(`bridge exited early (${code}): ${proc.stderr()}`)));
  });
}

/** Rows of `requestId` in the inbox of the store file (in `state`, when given). */
function inboxRows(file: string, requestId: string, state?: number): number {
  const db = new DatabaseSync(file);
  try {
    const row = db
      .prepare(
        `SELECT count(*) AS n FROM reelflow_inbox WHERE request_id = ?${state === undefined ? '' : ' AND state = ?'}`,
      )
      .get(...(state === undefined ? [requestId] : [requestId, state]));
    return Number(row?.n);
  } finally {
    db.close();
  }
}

describe('reelflow bridge', () => {
  it('prints the address it listens on, accepts a delivery and exits cleanly on SIGTERM', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'bridge-cli-'));
    const proc = run(['bridge', '--port', '0', '--host', '127.0.0.1', '--path', '/hooks/service'], {
      REELFLOW_WEBHOOK_SECRETS: `whsec_old,${SECRET}`,
      TEMPORAL_ADDRESS: env.address,
      REELFLOW_STATE_DIR: stateDir,
    });
    try {
      const url = await listeningUrl(proc);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/service$/);
      const event = makeEvent();
      expect((await deliver(url, event, [SECRET])).status).toBe(202);
      // Acknowledged once it is in the route store's inbox (the default file in the state directory);
      // no route workflow is started for a request nobody subscribed to.
      expect(inboxRows(join(stateDir, 'routes.sqlite'), event.request_id)).toBe(1);
      await expect(env.client.workflow.getHandle(routeWorkflowId(event.request_id)).describe()).rejects.toThrow(
        WorkflowNotFoundError,
      );
      expect((await deliver(url, makeEvent(), ['whsec_forged'])).status).toBe(401);
    } finally {
      proc.child.kill('SIGTERM');
    }
    expect(await proc.exit).toBe(0);
  });

  it('reads its signing secrets from the file REELFLOW_WEBHOOK_SECRETS_FILE names (a Docker secret)', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'bridge-cli-'));
    const secretsFile = join(stateDir, 'webhook_secrets');
    writeFileSync(secretsFile, `whsec_old,${SECRET}\n`, { mode: 0o600 });
    const proc = run(['bridge', '--port', '0', '--host', '127.0.0.1'], {
      REELFLOW_WEBHOOK_SECRETS_FILE: secretsFile,
      TEMPORAL_ADDRESS: env.address,
      REELFLOW_STATE_DIR: stateDir,
    });
    try {
      const url = await listeningUrl(proc);
      const event = makeEvent();
      expect((await deliver(url, event, [SECRET])).status).toBe(202);
      expect(inboxRows(join(stateDir, 'routes.sqlite'), event.request_id)).toBe(1);
      expect((await deliver(url, makeEvent(), ['whsec_forged'])).status).toBe(401);
    } finally {
      proc.child.kill('SIGTERM');
    }
    expect(await proc.exit).toBe(0);
    expect(proc.stdout() + proc.stderr()).not.toContain(SECRET);
  });

  it('refuses to start without signing secrets, naming the variable', async () => {
    const proc = run(['bridge', '--port', '0'], { TEMPORAL_ADDRESS: env.address });
    expect(await proc.exit).toBe(2);
    expect(proc.stderr()).toContain('REELFLOW_WEBHOOK_SECRETS');
    expect(proc.stdout()).not.toContain('listening');
  });

  it('the entry point acknowledges a delivery while Temporal hangs, and on SIGTERM exits keeping it in the inbox', async () => {
    // A Temporal address that accepts TCP but never answers: the forwarder's call hangs until its deadline.
    const sockets: Socket[] = [];
    let connected!: () => void;
    const reached = new Promise<void>((resolve) => (connected = resolve));
    const blackhole = createServer((socket) => {
      sockets.push(socket);
      connected();
    });
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const address = blackhole.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const stateDir = mkdtempSync(join(tmpdir(), 'bridge-cli-'));
    const proc = run(['--entry'], {
      REELFLOW_WEBHOOK_SECRETS: SECRET,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      REELFLOW_BRIDGE_PORT: '0',
      REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS: '1500',
      REELFLOW_STATE_DIR: stateDir,
    });
    try {
      const url = await listeningUrl(proc);
      const event = makeEvent();
      expect((await deliver(url, event, [SECRET])).status).toBe(202);
      // The lazy Temporal connection is opened by the forwarder: once it reaches us, a call is in flight.
      await reached;
      proc.child.kill('SIGTERM');
      expect(await proc.exit).toBe(0);
      // Still pending in the inbox: the next bridge forwards it.
      expect(inboxRows(join(stateDir, 'routes.sqlite'), event.request_id, 0)).toBe(1);
    } finally {
      proc.child.kill('SIGKILL');
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => blackhole.close(resolve));
    }
  });
});
