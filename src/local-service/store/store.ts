import { Journal, type TornTail } from './journal';
import type { JournalEntry } from './records';
import { ServiceState } from './state';

/** Journal size that triggers a compaction at least; larger once the snapshot itself is larger. */
export const DEFAULT_COMPACT_AT_BYTES = 8 * 1024 * 1024;

export interface StoreOptions {
  /** Compact once the journal exceeds max(this, 2 × the last snapshot); default 8 MiB. */
  compactAtBytes?: number;
  /** Runs on the replayed state before the first compaction (moves legacy inline data out). */
  prepare?: (state: ServiceState) => void;
  log?: { warn: (obj: object, msg: string) => void; error: (obj: object, msg: string) => void };
}

/**
 * Durable state: every change is journalled (and fsynced) before it is applied in memory, so
 * what a client was told always survives a crash. The journal is compacted into one snapshot at
 * start and whenever it has grown past its threshold, so disk use follows the live state.
 */
export class Store {
  private snapshotBytes = 0;

  private constructor(
    private readonly journal: Journal,
    readonly state: ServiceState,
    private readonly options: StoreOptions,
  ) {}

  /** Replays the journal under `dir` (a torn last record is cut off and reported), then compacts it. */
  static open(dir: string, options: StoreOptions = {}): { store: Store; torn: TornTail | null } {
    const { journal, entries, torn } = Journal.open(dir);
    const state = new ServiceState();
    for (const entry of entries) state.apply(entry);
    const store = new Store(journal, state, options);
    options.prepare?.(state);
    store.compact();
    return { store, torn };
  }

  /** Writes `entry` to disk, then applies it; throws (nothing applied) when the write fails. */
  commit(entry: JournalEntry): void {
    this.journal.append(entry);
    this.state.apply(entry);
    if (
      this.journal.bytes > Math.max(this.options.compactAtBytes ?? DEFAULT_COMPACT_AT_BYTES, 2 * this.snapshotBytes)
    ) {
      try {
        this.compact();
      } catch (error) {
        // The entry is durable already; a failed compaction leaves the longer journal in place.
        this.options.log?.error({ err: error }, 'journal compaction failed; will try again later');
      }
    }
  }

  /** Current journal size in bytes. */
  get journalBytes(): number {
    return this.journal.bytes;
  }

  /** The logger compaction failures go to (known only once the HTTP app exists). */
  setLog(log: NonNullable<StoreOptions['log']>): void {
    this.options.log = log;
  }

  close(): void {
    this.journal.close();
  }

  private compact(): void {
    this.journal.rewrite([{ t: 'snapshot', state: this.state.snapshot() }]);
    this.snapshotBytes = this.journal.bytes;
  }
}
