import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
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

describe('reelflow bridge', () => {
  it('prints the address it listens on, accepts a delivery and exits cleanly on SIGTERM', async () => {
    const taskQueue = `bridge-cli-${randomUUID()}`;
    const proc = run(['bridge', '--port', '0', '--host', '127.0.0.1', '--path', '/hooks/service'], {
      REELFLOW_WEBHOOK_SECRETS: `whsec_old,${SECRET}`,
      TEMPORAL_ADDRESS: env.address,
    });
    try {
      const url = await listeningUrl(proc);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/service$/);
      const event = makeEvent();
      expect((await deliver(url, event, [SECRET])).status).toBe(202);
      const description = await env.client.workflow.getHandle(routeWorkflowId(event.request_id)).describe();
      expect(description.taskQueue).toBe(taskQueue);
      expect((await deliver(url, makeEvent(), ['whsec_forged'])).status).toBe(401);
    } finally {
      proc.child.kill('SIGTERM');
    }
    expect(await proc.exit).toBe(0);
  });

  it('refuses to start without signing secrets, naming the variable', async () => {
    const proc = run(['bridge', '--port', '0'], { TEMPORAL_ADDRESS: env.address });
    expect(await proc.exit).toBe(2);
    expect(proc.stderr()).toContain('REELFLOW_WEBHOOK_SECRETS');
    expect(proc.stdout()).not.toContain('listening');
  });

  it('the worker entry point finishes an in-flight delivery on SIGTERM before exiting', async () => {
    // A Temporal address that accepts TCP but never answers: the delivery hangs until its deadline.
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
    const proc = run(['--entry'], {
      REELFLOW_WEBHOOK_SECRETS: SECRET,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      REELFLOW_BRIDGE_PORT: '0',
      REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS: '1500',
    });
    try {
      const url = await listeningUrl(proc);
      const answer = deliver(url, makeEvent(), [SECRET]);
      // The lazy Temporal connection is opened by this delivery: once it reaches us, the request is in flight.
      await reached;
      proc.child.kill('SIGTERM');
      const settled = await answer;
      expect(settled.status).toBe(503);
      expect(await proc.exit).toBe(0);
    } finally {
      proc.child.kill('SIGKILL');
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => blackhole.close(resolve));
    }
  });
});
