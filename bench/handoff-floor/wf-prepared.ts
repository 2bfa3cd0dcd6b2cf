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
 * replaced. Returns after `end`.
 */
export async function preparedChain(): Promise<void> {
  const requestIds: string[] = [];
  let received = 0;
  let ended = false;
  setHandler(submitted, (requestId) => {
    received += 1;
    if (requestId === 'end') ended = true;
    else requestIds.push(requestId);
  });
  let fallback: CancellationScope | null = null;
  for (let seen = 0; ;) {
    await condition(() => received > seen);
    seen = received;
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
