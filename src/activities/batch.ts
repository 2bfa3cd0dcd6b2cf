import { ApplicationFailure } from '@temporalio/activity';
import { FAILURE_TYPES } from '../contract';
import { putJsonLines, readJsonLinesPage } from '../media/json-lines';
import type { BatchItemResult, BatchManifestItem, StoredBatchManifest } from '../workflows/batch-types';
import type { MediaDeps } from './media';

/**
 * The store side of a paged batch (docs/batches.md): the workflow reads its manifest one page at a
 * time and writes its results as JSON Lines pages; nothing of either stays in history but digests.
 */
export interface BatchActivities {
  /** Page `page` of a stored manifest (items `page·pageSize` …), read through a byte range. */
  readBatchPage(manifest: StoredBatchManifest, page: number): Promise<BatchManifestItem[]>;
  /** Writes `results` as one JSON Lines object referenced by the batch; returns its digest. */
  writeBatchResults(batchWorkflowId: string, results: BatchItemResult[]): Promise<string>;
}

function needStore(media: MediaDeps | undefined): MediaDeps {
  if (media) return media;
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.mediaUnavailable,
    nonRetryable: true,
    message: 'a batch keeps its manifest and results in the media store, and this worker has none configured',
  });
}

export function createBatchActivities(media: MediaDeps | undefined): BatchActivities {
  return {
    async readBatchPage(manifest, page) {
      const { store } = needStore(media);
      return (await readJsonLinesPage(store, manifest, page)) as BatchManifestItem[];
    },
    async writeBatchResults(batchWorkflowId, results) {
      const { store } = needStore(media);
      return (await putJsonLines(store, results, batchWorkflowId, results.length || 1)).sha256;
    },
  };
}
