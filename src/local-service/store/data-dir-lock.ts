import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DataDirLockedError } from './errors';

const LOCK = 'service.lock';
const BREAK = 'service.lock.break';
/** A lock file younger than this with no readable owner is being written right now. */
const FRESH_MS = 5_000;

/** What a lock file says about its holder. */
export interface LockHolder {
  pid: number;
  /** Kernel start time of the holder (Linux `/proc/<pid>/stat` field 22); tells a reused pid apart. */
  startTime: string | null;
  host: string;
  startedAt: string;
}

/** Locks held by this process (a second start in the same process is refused like any other). */
const heldHere = new Set<string>();

function startTimeOf(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(holder: LockHolder, file: string): boolean {
  if (holder.pid === process.pid) return heldHere.has(file);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A live pid with another start time is an unrelated process that reused the pid.
  const now = holder.startTime === null ? null : startTimeOf(holder.pid);
  return holder.startTime === null || now === null || now === holder.startTime;
}

function readHolder(file: string): { holder: LockHolder | null; raw: string; ageMs: number } | null {
  try {
    const raw = fs.readFileSync(file, 'utf8');
    const ageMs = Date.now() - fs.statSync(file).mtimeMs;
    try {
      const parsed = JSON.parse(raw) as LockHolder;
      return { holder: Number.isInteger(parsed.pid) ? parsed : null, raw, ageMs };
    } catch {
      return { holder: null, raw, ageMs };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function tryCreate(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    const holder: LockHolder = {
      pid: process.pid,
      startTime: startTimeOf(process.pid),
      host: os.hostname(),
      startedAt: new Date().toISOString(),
    };
    fs.writeFileSync(fd, JSON.stringify(holder));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/**
 * Removes a stale lock (its holder is dead) under a second, short-lived lock, so that two
 * processes finding the same stale lock cannot both remove it and both go on. Returns false when
 * someone else is breaking it at this moment.
 */
function breakStale(dir: string, file: string, staleRaw: string): boolean {
  const breaker = path.join(dir, BREAK);
  if (!tryCreate(breaker)) {
    const other = readHolder(breaker);
    // A breaker left by a crash mid-break: its owner is gone; remove it and let the caller retry.
    if (other && (other.holder ? !isAlive(other.holder, breaker) : other.ageMs > FRESH_MS))
      fs.rmSync(breaker, { force: true });
    return false;
  }
  try {
    const again = readHolder(file);
    if (again && again.raw === staleRaw) fs.rmSync(file, { force: true });
    return true;
  } finally {
    fs.rmSync(breaker, { force: true });
  }
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Takes the exclusive lock of a data directory (`<dir>/service.lock`, created with O_EXCL, holding
 * the pid and its start time) before anything reads or rewrites the state. A lock whose holder is
 * dead (a crash, SIGKILL) is taken over; a live holder makes this throw DataDirLockedError, having
 * touched nothing. Returns the release function (idempotent).
 */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK);
  for (let attempt = 0; attempt < 20; attempt++) {
    if (tryCreate(file)) {
      heldHere.add(file);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        heldHere.delete(file);
        const current = readHolder(file);
        if (current?.holder?.pid === process.pid) fs.rmSync(file, { force: true });
      };
    }
    const current = readHolder(file);
    if (!current) continue;
    if (current.holder ? isAlive(current.holder, file) : current.ageMs < FRESH_MS)
      throw new DataDirLockedError(dir, current.holder);
    if (!breakStale(dir, file, current.raw)) pause(10);
  }
  throw new DataDirLockedError(dir, readHolder(file)?.holder ?? null);
}
