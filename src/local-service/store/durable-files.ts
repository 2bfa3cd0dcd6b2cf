import * as fs from 'node:fs';
import * as path from 'node:path';

/** fsyncs a directory so that the entries created or renamed in it survive a crash. */
export function syncDir(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, 'r');
  } catch {
    return; // not openable as a file on every platform; nothing more can be done there
  }
  try {
    fs.fsyncSync(fd);
  } catch {
    /* directories cannot be fsynced on every platform */
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes all of `data` at `position` of `fd`, checking every partial write; returns the bytes written. */
export function writeFully(fd: number, data: Buffer, position: number): number {
  let done = 0;
  while (done < data.length) {
    const n = fs.writeSync(fd, data, done, data.length - done, position + done);
    if (n <= 0) throw new Error(`write returned ${n} after ${done} of ${data.length} bytes`);
    done += n;
  }
  return done;
}

/**
 * Writes a file so that after a crash it is either absent or complete: a temporary file is
 * written and fsynced, renamed into place, and the directory fsynced. Synchronous on purpose:
 * callers journal a reference to the file right after, in the same turn.
 */
export function writeFileDurable(file: string, data: string | Buffer): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w');
  try {
    writeFully(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, 0);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  syncDir(dir);
}

/** fsyncs an existing file (an output render) and the directories up to `root`, for a later journal record. */
export async function syncFileAndDirs(file: string, root: string): Promise<void> {
  const handle = await fs.promises.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    syncDir(dir);
    if (path.resolve(dir) === path.resolve(root) || path.dirname(dir) === dir) break;
  }
}
