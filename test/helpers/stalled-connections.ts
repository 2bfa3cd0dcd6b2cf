import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as net from 'node:net';
import { join } from 'node:path';
import { Agent, request } from 'undici';

/**
 * A hostile client for the listeners' connection limits: a reelflow process started with few open
 * files, and connections that send a request's headers and one body byte, then hold.
 */

const ROOT = join(__dirname, '..', '..');

/** A reelflow entry point (src/workers/*.ts) running as a child process under `ulimit -n <files>`. */
export interface LimitedProcess {
  child: ChildProcessWithoutNullStreams;
  /** The URL its "listening on" line printed. */
  url: string;
  /** The URL its "metrics on" line printed, if any (read once it is listening). */
  metricsUrl(): string | undefined;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `src/workers/<entry>.ts` with at most `files` open files and waits for its "listening on" line. */
export async function startLimitedProcess(
  entry: 'bridge' | 'local-service',
  env: Record<string, string>,
  files = 256,
): Promise<LimitedProcess> {
  const script = join(ROOT, 'src', 'workers', `${entry}.ts`);
  // `ulimit -n` sets the soft and hard limits: Node cannot raise them past `files`.
  const child = spawn(
    'bash',
    ['-c', `ulimit -n ${files} && exec "$0" "$@"`, process.execPath, '-r', 'tsx/cjs', script],
    { cwd: ROOT, env: { ...process.env, ...env } },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    void exit.then((code) => reject(new Error(`${entry} exited early (${code}): ${out}`)));
  });
  return {
    child,
    url,
    metricsUrl: () => /metrics on (http:\/\/\S+)/.exec(out)?.[1],
    output: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      try {
        return await exit;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** One held connection: when it opened and when the server closed it. */
export interface HeldConnection {
  socket: net.Socket;
  openedAt: number;
  closedAt?: number;
  closed: Promise<void>;
}

/**
 * Opens `count` connections to `url`, each sending POST headers announcing a 1000-byte body and one
 * byte of it, then holding: nothing more is sent and nothing is closed from this side.
 */
export async function holdStalledPosts(
  url: string,
  count: number,
  headers: Record<string, string> = {},
): Promise<HeldConnection[]> {
  const target = new URL(url);
  const head = [
    `POST ${target.pathname} HTTP/1.1`,
    `host: ${target.host}`,
    'content-type: application/json',
    'content-length: 1000',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    '',
    '{',
  ].join('\r\n');
  const open = (): Promise<HeldConnection> =>
    new Promise((resolve) => {
      const socket = net.connect(Number(target.port), target.hostname);
      socket.on('error', () => undefined);
      socket.resume();
      const held: HeldConnection = {
        socket,
        openedAt: Date.now(),
        closed: new Promise<void>((done) =>
          socket.once('close', () => {
            held.closedAt = Date.now();
            done();
          }),
        ),
      };
      socket.once('connect', () => {
        held.openedAt = Date.now();
        socket.write(head);
        resolve(held);
      });
      // Refused at connect: counted as closed at once.
      socket.once('close', () => resolve(held));
    });
  const held: HeldConnection[] = [];
  // In batches of 50: 300 connections without a connect storm from one event loop.
  for (let i = 0; i < count; i += 50)
    held.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, open))));
  return held;
}

/** Waits until every connection is closed or `deadlineMs` passed; returns those still open. */
export async function openAfter(held: readonly HeldConnection[], deadlineMs: number): Promise<HeldConnection[]> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(held.map((connection) => connection.closed)),
    new Promise((resolve) => (timer = setTimeout(resolve, deadlineMs))),
  ]);
  clearTimeout(timer);
  return held.filter((connection) => connection.closedAt === undefined);
}

/** One request on a connection of its own (as the service's sender opens one per attempt); the status, or the error's code. */
export async function onFreshConnection(
  url: string,
  options: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
): Promise<number | string> {
  const agent = new Agent({ connections: 1, pipelining: 0 });
  try {
    const response = await request(url, {
      dispatcher: agent,
      method: options.method,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.body !== undefined ? { body: options.body } : {}),
    });
    await response.body.dump();
    return response.statusCode;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  } finally {
    await agent.destroy();
  }
}

/** The least time between two attempts of keepCalling. */
const PACE_MS = 10;

/**
 * Calls `attempt` one after another, at least `PACE_MS` apart, while `until()` is false, then `after`
 * more times; every outcome with how many held connections were open when it started. Bounded by
 * `maxAttempts` (paced, 2,000 attempts outlast the 15 s the server has to close what is stalled: a fast
 * answer no longer ends the loop before the server's limits have run).
 */
export async function keepCalling<T>(
  attempt: () => Promise<T>,
  held: readonly HeldConnection[],
  options: { until: () => boolean; after: number; maxAttempts: number },
): Promise<Array<{ outcome: T; heldOpen: number }>> {
  const results: Array<{ outcome: T; heldOpen: number }> = [];
  let extra = 0;
  while (results.length < options.maxAttempts && extra < options.after) {
    if (options.until()) extra += 1;
    const heldOpen = held.filter((connection) => connection.closedAt === undefined).length;
    const started = Date.now();
    results.push({ outcome: await attempt(), heldOpen });
    const left = PACE_MS - (Date.now() - started);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
  }
  return results;
}
