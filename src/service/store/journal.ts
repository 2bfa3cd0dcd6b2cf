import * as fs from 'node:fs';
import * as path from 'node:path';
import type { JournalEntry } from './records';

const JOURNAL = 'journal.jsonl';
const TMP = 'journal.jsonl.tmp';

/** The durable journal could not be read (a corrupt line that is not the last one). */
export class JournalCorruptError extends Error {
  readonly code = 'journal_corrupt';
  constructor(file: string, line: number) {
    super(`${file}: line ${line} is not a valid journal entry; refusing to start on damaged state`);
    this.name = 'JournalCorruptError';
  }
}

/**
 * Append-only JSONL journal with an fsync after every entry, so an answer is only sent once its
 * change is on disk. A crash can only cut the last line short; that line was never acknowledged
 * and is dropped on the next start. Each start compacts the journal into one snapshot entry,
 * written to a temporary file, fsynced and renamed over the old one: never half-written state.
 */
export class Journal {
  private fd: number | null = null;

  private constructor(private readonly dir: string) {}

  /** Reads every complete entry of the journal in `dir` (creating the directory if needed). */
  static open(dir: string): { journal: Journal; entries: JournalEntry[] } {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, JOURNAL);
    const entries: JournalEntry[] = [];
    if (fs.existsSync(file)) {
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, index) => {
        if (line.trim() === '') return;
        try {
          entries.push(JSON.parse(line) as JournalEntry);
        } catch {
          // Only the final line may be torn (a crash during its write); anything else is damage.
          const isLast = lines.slice(index + 1).every((rest) => rest.trim() === '');
          if (!isLast) throw new JournalCorruptError(file, index + 1);
        }
      });
    }
    return { journal: new Journal(dir), entries };
  }

  /** Replaces the journal atomically with `entries` (a compaction), then opens it for appends. */
  rewrite(entries: readonly JournalEntry[]): void {
    this.close();
    const tmp = path.join(this.dir, TMP);
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeSync(fd, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, path.join(this.dir, JOURNAL));
    syncDir(this.dir);
    this.fd = fs.openSync(path.join(this.dir, JOURNAL), 'a');
  }

  /** Appends one entry and waits until it is on disk. */
  append(entry: JournalEntry): void {
    if (this.fd === null) throw new Error('journal is closed');
    fs.writeSync(this.fd, `${JSON.stringify(entry)}\n`);
    fs.fdatasyncSync(this.fd);
  }

  close(): void {
    if (this.fd !== null) {
      fs.closeSync(this.fd);
      this.fd = null;
    }
  }
}

function syncDir(dir: string): void {
  // A rename is durable only once the directory entry is; not supported on every platform.
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    /* best effort */
  }
}
