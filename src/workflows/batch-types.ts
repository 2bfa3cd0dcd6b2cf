import type { ArchivedOutput } from '../contract/archived-output';
import type { PipelineSpec } from '../pipeline-spec/spec';
import type { CreditLedger, PipelineStatus, PipelineWorkflowInput } from './pipeline-types';
import type { ResumeFrom } from './resume-types';

/** Outcome of one pipeline of a batch (one line of a result page; kept small). */
export interface BatchItemResult {
  name: string;
  workflowId: string;
  status: Exclude<PipelineStatus, 'running' | 'rejected'> | 'skipped';
  ledger?: CreditLedger;
  /** Output URL of the last step. */
  finalOutputUrl?: string;
  /** The media-store copy of that output, when it was archived (`reelflow outputs batch/<id>` reads it). */
  finalOutput?: ArchivedOutput;
  error?: string;
}

/** A batch item whose submit the account refused: it waits for `reelflow batch resume` (docs/batches.md). */
export interface BatchItemWaiting {
  name: string;
  workflowId: string;
  /** The refusal's problem code: `insufficient_credits`, `unauthorized`, `forbidden` or `rate_limited`. */
  code: string;
  /** The service's message, with the step it refused. */
  reason: string;
  /** Workflow time of the refusal, ms: one older than the last resume is resumed at once. */
  at: number;
}

/** Why a batch stopped starting items until `reelflow batch resume`: an account-level refusal. */
export interface BatchPause {
  code: string;
  /** The first refusal's reason, naming the item and step. */
  reason: string;
  /** Workflow time the batch paused, ms. */
  since: number;
  /** Items waiting for the resume (refused, neither failed nor paid), by name. */
  waiting: string[];
}

/** What `resumeBatch` answers: the refusal it ended and how many waiting items it woke. */
export interface BatchResumeAnswer {
  code: string;
  resumed: number;
}

/** One line of a stored batch manifest: a resolved pipeline spec (media as references). */
export interface BatchManifestItem {
  /** Position in the manifest, from 0. */
  index: number;
  spec: PipelineSpec;
  /** `--rerun-failed`: the earlier run of this item to resume (its completed steps carried). */
  resume?: ResumeFrom;
}

/** A batch's manifest: JSON Lines in the media store, one BatchManifestItem a line, read a page at a time. */
export interface StoredBatchManifest {
  sha256: string;
  bytes: number;
  /** Items in the manifest. */
  records: number;
  pageSize: number;
  pageOffsets: number[];
  /** First item of each page; absent in manifests stored before pages were bounded by bytes (p·pageSize). */
  pageStarts?: number[];
}

/** The page holding item `index` of a stored manifest, and the item's place in it. */
export function manifestPageOf(manifest: StoredBatchManifest, index: number): { page: number; offset: number } {
  const starts = manifest.pageStarts;
  if (!starts) {
    const page = Math.floor(index / manifest.pageSize);
    return { page, offset: index - page * manifest.pageSize };
  }
  // The last page starting at or before `index` (pages are in order).
  let page = 0;
  while ((starts[page + 1] ?? Infinity) <= index) page += 1;
  return { page, offset: index - (starts[page] ?? 0) };
}

/** Credits of a batch's finished items, summed from their ledgers. */
export type BatchCredits = Omit<CreditLedger, 'quoted'>;

/** How many items ended each way. */
export interface BatchCounts {
  completed: number;
  failed: number;
  cancelled: number;
  skipped: number;
}

/** What one run of a batch hands to the next through continue-as-new: counts, never items. */
export type BatchCarried = Required<
  Pick<BatchProgress, 'credits' | 'resultPages' | 'runs' | 'startedAt' | 'budgetCredits' | 'stoppedBy'>
> & {
  /** The next manifest index this partition starts. */
  nextIndex: number;
  /** Items in flight (started, not yet reported), name → manifest index. */
  window: Record<string, number>;
  counts: BatchCounts;
  /** Results not yet written to a result page. */
  pendingResults: BatchItemResult[];
  /** Set while the batch is paused by an account-level refusal. */
  pause?: BatchPause;
  /** Workflow time of the last `resumeBatch`, ms. */
  resumedAt?: number;
};

/** Input of `batchWorkflow`: the manifest is a reference, so the input stays small (docs/batches.md). */
export interface BatchWorkflowInput extends Pick<
  PipelineWorkflowInput,
  'uriRules' | 'defaultPacing' | 'publishSearchAttributes'
> {
  name: string;
  manifest: StoredBatchManifest;
  /** Pipelines in flight at once (default 4); above MAX_WINDOW_PER_RUN the batch is partitioned. */
  concurrency?: number;
  /** Items started per run before continue-as-new (default 400). */
  itemsPerRun?: number;
  /** Stop starting items once spent plus estimated in-flight credits would pass it. */
  budgetCredits?: number;
  /** The batch this one re-runs the failed items of (`reelflow batch --rerun-failed`), for display. */
  rerunOf?: string;
  /** Set by a partitioned batch for each of its partitions: items `index`, `index + count`, `index + 2·count`, … */
  partition?: { index: number; count: number };
  /** Set by the workflow itself when it continues as new. */
  carried?: BatchCarried;
}

/** `batchProgress` query answer and the workflow's result. */
export interface BatchProgress extends BatchCounts {
  name: string;
  total: number;
  /** Items this batch runs (all, or only the failed ones in re-run mode). */
  toRun: number;
  running: string[];
  /** Runs of this batch so far (continue-as-new count + 1). */
  runs: number;
  /** The results not yet written to a result page (the others are in `resultPages`). */
  results: BatchItemResult[];
  /** `paused`: an account-level refusal stopped it starting items until `reelflow batch resume` (see `paused`). */
  status: 'running' | 'paused' | 'completed' | 'cancelled';
  /** Why the batch is paused and which items wait. */
  paused?: BatchPause;
  /** Paged batches: the result pages written so far (media store digests, JSON Lines of BatchItemResult). */
  resultPages?: string[];
  /** Paged batches: the stored manifest's digest and item count. */
  manifest?: { sha256: string; records: number };
  concurrency?: number;
  credits?: BatchCredits;
  /** Workflow time the batch started and of this answer, ms (items/s and ETA come from them). */
  startedAt?: number;
  updatedAt?: number;
  budgetCredits?: number | null;
  /** Why the batch stopped starting items before the end of its manifest. */
  stoppedBy?: 'budget' | null;
  /** A partitioned batch: the workflow ids of its partitions (each a batch workflow of its own). */
  partitions?: string[];
  rerunOf?: string;
}
