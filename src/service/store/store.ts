import { Journal } from './journal';
import type { JournalEntry } from './records';
import { ServiceState } from './state';

/**
 * Durable state: every change is journalled (and fsynced) before it is applied in memory, so
 * what a client was told always survives a crash.
 */
export class Store {
  private constructor(
    private readonly journal: Journal,
    readonly state: ServiceState,
  ) {}

  /** Replays the journal under `dir`, then compacts it into one snapshot. */
  static open(dir: string): Store {
    const { journal, entries } = Journal.open(dir);
    const state = new ServiceState();
    for (const entry of entries) state.apply(entry);
    journal.rewrite([{ t: 'snapshot', state: state.snapshot() }]);
    return new Store(journal, state);
  }

  /** Writes `entry` to disk, then applies it. */
  commit(entry: JournalEntry): void {
    this.journal.append(entry);
    this.state.apply(entry);
  }

  close(): void {
    this.journal.close();
  }
}
