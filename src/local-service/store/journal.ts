import * as fs from 'node:fs';
import * as path from 'node:path';
import { syncDir, writeFully } from './durable-files';
import { JournalCorruptError, JournalWriteError } from './errors';
import type { JournalEntry } from './records';

const JOURNAL = 'journal.jsonl';
const TMP = 'journal.jsonl.tmp';

/** A torn last record cut off at start. */
export interface TornTail {
  offset: number;
  bytes: number;
}

/**
 * Append-only JSONL journal, one fsynced record per change, so an answer is only sent once its
 * change is on disk. Every write is checked (length and error); a failed one is cut off again at
 * once (or, if even that fails, the journal refuses every later write), so a record is either
 * whole or absent. A crash can therefore only tear the last record; on open it is cut off and
 * reported. Compaction replaces the file by write-temp + fsync + rename + directory fsync.
 */
export class Journal {
  private fd: number | null = null;
  private size = 0;
  private broken: Error | null = null;

  private constructor(private readonly dir: string) {}

  /** Reads every complete record in `dir` (creating the directory), cutting off a torn last one. */
  static open(dir: string): { journal: Journal; entries: JournalEntry[]; torn: TornTail | null } {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, JOURNAL);
    const journal = new Journal(dir);
    const entries: JournalEntry[] = [];
    let torn: TornTail | null = null;
    const data = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
    let offset = 0;
    let line = 0;
    while (offset < data.length) {
      const end = data.indexOf(0x0a, offset);
      const stop = end < 0 ? data.length : end;
      line += 1;
      const text = data.toString('utf8', offset, stop);
      // Zero bytes after a crash are a filesystem extending the file before its data landed.
      const last =
        end < 0 ||
        data.subarray(end + 1).every((b) => b === 0x0a || b === 0x20 || b === 0x0d || b === 0x09 || b === 0x00);
      let entry: JournalEntry | null = null;
      if (end >= 0 && text.trim() !== '') {
        try {
          entry = JSON.parse(text) as JournalEntry;
        } catch {
          entry = null;
        }
      }
      if (entry) entries.push(entry);
      else if (text.trim() !== '' || end < 0) {
        // A record without its newline, or unreadable, is a write cut short by a crash only if
        // nothing follows it; anywhere else it is damage.
        if (!last) throw new JournalCorruptError(file, line, offset);
        torn = { offset, bytes: data.length - offset };
        break;
      }
      offset = stop + 1;
    }
    journal.size = torn ? torn.offset : data.length;
    journal.fd = fs.openSync(file, fs.existsSync(file) ? 'r+' : 'w+');
    if (torn) {
      fs.ftruncateSync(journal.fd, torn.offset);
      fs.fsyncSync(journal.fd);
    }
    return { journal, entries, torn };
  }

  /** Bytes of valid records in the file. */
  get bytes(): number {
    return this.size;
  }

  /** Replaces the journal atomically with `entries` (a compaction), then goes on appending to it. */
  rewrite(entries: readonly JournalEntry[]): void {
    const tmp = path.join(this.dir, TMP);
    const data = Buffer.from(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''), 'utf8');
    const fd = fs.openSync(tmp, 'w');
    try {
      writeFully(fd, data, 0);
      fs.fsyncSync(fd);
    } catch (error) {
      fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
      throw new JournalWriteError(`compaction failed: ${(error as Error).message}`);
    }
    fs.renameSync(tmp, path.join(this.dir, JOURNAL));
    syncDir(this.dir);
    // The old descriptor points at the replaced file; appends go to the new one.
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = fd;
    this.size = data.length;
    this.broken = null;
  }

  /** Appends one record and waits until it is on disk; throws JournalWriteError if it is not. */
  append(entry: JournalEntry): void {
    if (this.fd === null) throw new JournalWriteError('journal is closed');
    if (this.broken) throw new JournalWriteError(`journal unusable after a failed write: ${this.broken.message}`);
    const data = Buffer.from(`${JSON.stringify(entry)}\n`, 'utf8');
    try {
      writeFully(this.fd, data, this.size);
      fs.fdatasyncSync(this.fd);
    } catch (error) {
      this.cutBack(error as Error);
      throw new JournalWriteError(`journal write failed: ${(error as Error).message}`);
    }
    this.size += data.length;
  }

  close(): void {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    }
  }

  /** Removes what a failed write may have left after the last good record. */
  private cutBack(cause: Error): void {
    try {
      if (this.fd === null) return;
      fs.ftruncateSync(this.fd, this.size);
      fs.fsyncSync(this.fd);
    } catch {
      this.broken = cause;
    }
  }
}
