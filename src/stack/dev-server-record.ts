import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { processAlive } from './stack-state';

/**
 * Who started the Temporal dev server of a state directory: `temporal/dev-server.json` beside its
 * SQLite file, written when a process starts one, holding the server's pid and its owner's. When the
 * owner dies without stopping it (`reelflow dev` killed with -9), the server runs on; the next start
 * on that directory finds it listening and its owner gone, adopts it (it becomes the new owner) and
 * stops it when it stops itself. A server nobody recorded — another project's, a `temporal` a person
 * started — is used and never stopped.
 */

/** What the record file holds. */
export interface DevServerRecord {
  /** The Temporal CLI process serving the dev server. */
  pid: number;
  /** The process that started or adopted it (it stops the server when it stops). */
  owner: number;
  address: string;
  dbFile: string;
  startedAt: string;
}

/** Where the record of the dev server that keeps `dbFile` is. */
export function devServerRecordFile(dbFile: string): string {
  return join(dirname(dbFile), 'dev-server.json');
}

/** Records `pid` as the dev server of `dbFile`, owned by this process. */
export function writeDevServerRecord(dbFile: string, pid: number, address: string): void {
  const record: DevServerRecord = { pid, owner: process.pid, address, dbFile, startedAt: new Date().toISOString() };
  writeFileSync(devServerRecordFile(dbFile), `${JSON.stringify(record, null, 2)}\n`);
}

/** Removes the record, if it is still about `pid`. */
export function clearDevServerRecord(dbFile: string, pid: number): void {
  if (readRecord(dbFile)?.pid === pid) rmSync(devServerRecordFile(dbFile), { force: true });
}

function readRecord(dbFile: string): DevServerRecord | null {
  try {
    const record = JSON.parse(readFileSync(devServerRecordFile(dbFile), 'utf8')) as Partial<DevServerRecord>;
    return Number.isInteger(record.pid) && Number.isInteger(record.owner) ? (record as DevServerRecord) : null;
  } catch {
    return null;
  }
}

/** A process's command line, or null when it cannot be read (then nothing is adopted). */
function commandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    try {
      return execFileSync('ps', ['-p', String(pid), '-o', 'command='], { encoding: 'utf8' });
    } catch {
      return null;
    }
  }
}

/**
 * The recorded dev server of `dbFile` serving `address`, when its owner is gone: the pid is alive,
 * and still a `temporal server start-dev` on that very SQLite file (a pid the OS gave to another
 * process since is never taken for it). It is recorded as this process's from now on.
 */
export function adoptOrphanedDevServer(dbFile: string, address: string): DevServerRecord | null {
  const record = readRecord(dbFile);
  if (!record || record.address !== address || record.owner === process.pid) return null;
  if (processAlive(record.owner) || !processAlive(record.pid)) return null;
  const command = commandLine(record.pid);
  if (!command || !command.includes('start-dev') || !command.includes(dbFile)) return null;
  writeDevServerRecord(dbFile, record.pid, address);
  return record;
}

/** Stops a dev server this process does not have as a child: SIGTERM, SIGKILL after `graceMs`. */
export async function stopByPid(pid: number, graceMs = 10_000): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (processAlive(pid)) {
    if (Date.now() > deadline) {
      signal('SIGKILL');
      break;
    }
    await sleep(100);
  }
  for (let waited = 0; processAlive(pid) && waited < 5_000; waited += 100) await sleep(100);
}
