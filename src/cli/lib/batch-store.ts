import { readJsonLines } from '../../media/json-lines';
import type { MediaStore } from '../../media/store';
import type { BatchItemResult, BatchManifestItem, BatchProgress } from '../../workflows/batch-types';

/**
 * A paged batch as the CLI reads it back: its progress summed over partitions, and its results and
 * manifest out of the media store (docs/batches.md).
 */

/** Every result a batch has reported: its result pages (read from the store) and those not yet written. */
export async function batchResults(progress: BatchProgress, store: MediaStore): Promise<BatchItemResult[]> {
  const paged: BatchItemResult[] = [];
  for (const sha256 of progress.resultPages ?? [])
    paged.push(...((await readJsonLines(store, sha256)) as BatchItemResult[]));
  return [...paged, ...progress.results];
}

/** Every item of a paged batch's stored manifest. */
export async function batchManifestItems(progress: BatchProgress, store: MediaStore): Promise<BatchManifestItem[]> {
  if (!progress.manifest) return [];
  return (await readJsonLines(store, progress.manifest.sha256)) as BatchManifestItem[];
}
