import { getExternalWorkflowHandle, setHandler } from '@temporalio/workflow';
import { batchItemWaitingSignal, batchResumedSignal, pipelineWorkflowId, resumeBatchUpdate } from './definitions';
import type { BatchCarried, BatchItemWaiting } from './batch-types';

/**
 * A batch paused by an account-level refusal (docs/batches.md, "Paused batches"): an item whose submit
 * the account refused (credits, key, 429s past the bound) tells the batch and waits; the batch stops
 * starting items and reads `paused` with the reason until `reelflow batch resume` (the `resumeBatch`
 * update), which wakes every waiting item to submit again. Its state rides in the carried counts.
 */
export function answerPauses(c: BatchCarried, changed: () => void): void {
  setHandler(batchItemWaitingSignal, (waiting) => hold(c, waiting, changed));
  setHandler(
    resumeBatchUpdate,
    async () => {
      const pause = c.pause as NonNullable<BatchCarried['pause']>;
      delete c.pause;
      c.resumedAt = Date.now();
      changed();
      await Promise.all(pause.waiting.map(wake));
      return { code: pause.code, resumed: pause.waiting.length };
    },
    {
      validator: () => {
        if (!c.pause) throw new Error('the batch is not paused: nothing to resume');
      },
    },
  );
}

/** An item ended (cancelled, or failed some other way): it waits no longer. */
export function dropWaiting(c: BatchCarried, name: string): void {
  if (c.pause) c.pause.waiting = c.pause.waiting.filter((waiting) => waiting !== name);
}

function hold(c: BatchCarried, waiting: BatchItemWaiting, changed: () => void): void {
  if (!(waiting.name in c.window)) return;
  // Refused before the last resume (the signal crossed it): the account may have been topped up since.
  if (!c.pause && c.resumedAt !== undefined && waiting.at < c.resumedAt) {
    void wake(waiting.name);
    return;
  }
  c.pause ??= { code: waiting.code, reason: waiting.reason, since: Date.now(), waiting: [] };
  if (!c.pause.waiting.includes(waiting.name)) c.pause.waiting.push(waiting.name);
  changed();
}

/** Tells a waiting item to submit again; an item that closed meanwhile reports its end by itself. */
function wake(name: string): Promise<void> {
  return getExternalWorkflowHandle(pipelineWorkflowId(name))
    .signal(batchResumedSignal)
    .catch(() => undefined);
}
