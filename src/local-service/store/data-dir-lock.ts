import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { DataDirLockedError, type LockHolder } from './errors';

/** What the holder of a data directory says about itself when asked. */
export type { LockHolder };

/** How long a holder that accepted the connection may take to say who it is. */
const ANSWER_MS = 1_000;
/**
 * How long a bound name whose holder does not answer is retried before refusing: a process killed
 * while in an uninterruptible wait (an fsync) keeps its sockets until the wait ends and it exits.
 */
const SETTLE_MS = 3_000;

/**
 * The socket name of a data directory, one per real path: on Linux an abstract Unix socket (a name
 * in the kernel, no file); elsewhere a socket file in the directory, whose stale leftovers are told
 * apart by a refused connection.
 */
function socketNameOf(realDir: string): { name: string; abstract: boolean } {
  if (process.platform === 'linux') {
    const digest = createHash('sha256').update(realDir).digest('hex').slice(0, 48);
    return { name: `\0reelflow-service-data-dir/${digest}`, abstract: true };
  }
  return { name: path.join(realDir, 'service.sock'), abstract: false };
}

function listen(server: net.Server, name: string): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const onError = (error: NodeJS.ErrnoException) => resolve(error);
    server.once('error', onError);
    server.listen({ path: name, exclusive: true }, () => {
      server.off('error', onError);
      resolve(null);
    });
  });
}

/** Asks the process bound to `name` who it is: its answer, `gone` when nothing is bound any more, or `silent`. */
function askHolder(name: string): Promise<LockHolder | 'gone' | 'silent'> {
  return new Promise((resolve) => {
    let text = '';
    const socket = net.connect({ path: name });
    const timer = setTimeout(() => finish('silent'), ANSWER_MS);
    const finish = (outcome: LockHolder | 'gone' | 'silent') => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => {
      try {
        const holder = JSON.parse(text) as LockHolder;
        finish(Number.isInteger(holder.pid) ? holder : 'silent');
      } catch {
        finish('silent');
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) =>
      finish(error.code === 'ECONNREFUSED' || error.code === 'ENOENT' ? 'gone' : 'silent'),
    );
  });
}

/**
 * Takes the exclusive lock of a data directory before anything reads or rewrites its state, by
 * binding a Unix socket named after the directory's real path. The kernel frees the name when the
 * holder's last descriptor closes — on exit, SIGKILL included, before the holder is even reaped — so
 * a restart right after a crash takes it, while a live holder (in this process or another) makes
 * this throw DataDirLockedError naming it, having touched nothing. The holder answers each
 * connection with its pid, host and start time. Returns the release function (idempotent).
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  fs.mkdirSync(dir, { recursive: true });
  const { name, abstract } = socketNameOf(fs.realpathSync(dir));
  const me: LockHolder = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const server = net.createServer((socket) => socket.end(JSON.stringify(me)));
    const error = await listen(server, name);
    if (!error) {
      // The lock must not keep a process alive that has nothing else to do.
      server.unref();
      let released: Promise<void> | null = null;
      return () =>
        (released ??= new Promise<void>((resolve) => server.close(() => resolve())).then(() => {
          if (!abstract) fs.rmSync(name, { force: true });
        }));
    }
    if (error.code !== 'EADDRINUSE') throw error;
    const holder = await askHolder(name);
    if (holder === 'gone') {
      // A socket file left by a crash (abstract names vanish by themselves): remove it and bind again.
      if (!abstract) fs.rmSync(name, { force: true });
      continue;
    }
    if (holder !== 'silent' || Date.now() >= deadline)
      throw new DataDirLockedError(dir, holder === 'silent' ? null : holder);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
