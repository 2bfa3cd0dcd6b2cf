import {
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';

/** A job the webhook receiver submitted for this chain (its request id), or `end` after the last one completed. */
export const submitted = defineSignal<[string]>('submitted');

/**
 * The pipeline's side of a prepared submit: it does not submit, it records what the receiver submitted.
 * Each signal costs what a reelflow step's workflow task costs Temporal beside the submit: the request
 * ids published for `reelflow orphans` (one search-attribute upsert) and the step's fallback timer
 * replaced.
 */
export async function preparedChain(signals: number): Promise<void> {
  const requestIds: string[] = [];
  let ended = false;
  setHandler(submitted, (requestId) => {
    if (requestId === 'end') ended = true;
    else requestIds.push(requestId);
  });
  let seen = 0;
  let fallback: CancellationScope | null = null;
  while (seen < signals) {
    await condition(() => requestIds.length + (ended ? 1 : 0) > seen);
    seen = requestIds.length + (ended ? 1 : 0);
    fallback?.cancel();
    upsertSearchAttributes({ ReelflowRequestIds: [...requestIds] });
    if (ended) return;
    const scope = new CancellationScope();
    fallback = scope;
    scope
      .run(() => sleep('10 minutes'))
      .catch((error: unknown) => {
        if (!isCancellation(error)) throw error;
      });
  }
}
