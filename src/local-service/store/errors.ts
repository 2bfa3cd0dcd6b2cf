import { ReelflowError } from '../../contract';

/** Errors of the service's durable store (journal and data-directory lock). */

/** Another live process holds the data directory. */
export class DataDirLockedError extends ReelflowError {
  readonly code = 'data_dir_locked';
  constructor(
    readonly dir: string,
    readonly holder: LockHolder | null,
  ) {
    super(
      holder
        ? `data directory ${dir} is in use by another reelflow service (pid ${holder.pid} on ${holder.host}, started ${holder.startedAt}); stop it first or use another --data-dir`
        : `data directory ${dir} is held by another process that does not say who it is; stop it first or use another --data-dir`,
    );
  }
}

/** The durable journal could not be read (a corrupt record that is not the last one). */
export class JournalCorruptError extends ReelflowError {
  readonly code = 'journal_corrupt';
  constructor(file: string, line: number, offset: number) {
    super(
      `${file}: line ${line} (byte ${offset}) is not a valid journal entry; refusing to start on damaged state (later records exist, so it is not a torn last write)`,
    );
  }
}

/** A write to the journal failed; the change was not made and must not be acknowledged. */
export class JournalWriteError extends ReelflowError {
  readonly code = 'journal_write_failed';
}

/** The process holding a data directory's lock, as it says who it is (./data-dir-lock.ts). */
export interface LockHolder {
  pid: number;
  host: string;
  startedAt: string;
}
