import type { MediaStore, StoredObject } from './store';

/**
 * Garbage collection of the media store: an object goes when nothing references it any more.
 * A referrer (pipeline) still holds its objects while it runs, and for `olderThanSeconds` after it
 * closed; an object put or referenced within that window is kept too (a `reelflow run` stores its
 * files before the pipeline exists). Pure policy over the store and a lookup of each referrer's run state.
 */

/**
 * Whether a referrer's workflow (a pipeline, or a batch) still runs, as Temporal says: running, closed at a
 * time, or unknown (never started, or past retention). Not the pipeline's own state (src/workflows/pipeline-state.ts).
 */
export type ReferrerRunState = { state: 'running' } | { state: 'closed'; closedAt: Date } | { state: 'unknown' };

export interface GcCandidate extends StoredObject {
  referrers: string[];
}

export interface GcReport {
  examined: number;
  kept: number;
  removed: GcCandidate[];
  bytesRemoved: number;
  applied: boolean;
}

export interface GcOptions {
  store: MediaStore;
  olderThanSeconds: number;
  /** Looks a pipeline up (e.g. describe `pipeline/<name>` in Temporal). */
  runStateOf: (pipeline: string) => Promise<ReferrerRunState>;
  /** Delete (true) or only report (false: the dry run). */
  apply: boolean;
  now?: Date;
}

export async function collectGarbage(options: GcOptions): Promise<GcReport> {
  const now = options.now ?? new Date();
  const cutoff = now.getTime() - options.olderThanSeconds * 1000;
  const states = new Map<string, Promise<ReferrerRunState>>();
  const stateOf = (pipeline: string) => {
    let state = states.get(pipeline);
    if (!state) states.set(pipeline, (state = options.runStateOf(pipeline)));
    return state;
  };
  const report: GcReport = { examined: 0, kept: 0, removed: [], bytesRemoved: 0, applied: options.apply };
  for await (const object of options.store.list()) {
    report.examined += 1;
    const referrers = await options.store.referrers(object.sha256);
    let keep = object.createdAt.getTime() > cutoff;
    for (const referrer of referrers) {
      if (keep) break;
      if (referrer.at.getTime() > cutoff) keep = true;
      else {
        const state = await stateOf(referrer.pipeline);
        keep = state.state === 'running' || (state.state === 'closed' && state.closedAt.getTime() > cutoff);
      }
    }
    if (keep) {
      report.kept += 1;
      continue;
    }
    if (options.apply) await options.store.delete(object.sha256);
    report.removed.push({ ...object, referrers: referrers.map((r) => r.pipeline) });
    report.bytesRemoved += object.bytes;
  }
  return report;
}
