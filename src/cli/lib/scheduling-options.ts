import { InvalidArgumentError, type Command } from 'commander';
import type { Priority } from '@temporalio/common';

/**
 * `--priority`, `--fairness-key` and `--fairness-weight`: the Temporal priority a pipeline or batch
 * starts with. Temporal orders its task queues by it, and the account's slots are granted by it
 * (priority first, then weighted fair share between keys; docs/decisions/account-slots.md). A batch's
 * items start with the batch's `--priority`, else their spec's `priority`, and the batch's fairness key
 * and weight.
 */

/** Commander parser of `--priority`: a whole number 1 (highest) … 5. */
export function priorityOption(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > 5) throw new InvalidArgumentError('must be 1 (highest) to 5 (default 3)');
  return n;
}

/** Commander parser of `--fairness-weight`: a number from 0.001 to 1000 (Temporal's range). */
export function fairnessWeightOption(text: string): number {
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || n < 0.001 || n > 1000)
    throw new InvalidArgumentError('must be a number from 0.001 to 1000 (default 1)');
  return n;
}

/** Commander parser of `--fairness-key`: 1–64 bytes (Temporal's limit). */
export function fairnessKeyOption(text: string): string {
  const length = Buffer.byteLength(text);
  if (length < 1 || length > 64 || /\s/.test(text))
    throw new InvalidArgumentError('must be 1 to 64 bytes without spaces');
  return text;
}

/** Adds `--priority` (and, for batches, the fairness flags) to `command`. */
export function schedulingFlags(command: Command, what: 'pipeline' | 'batch'): Command {
  command.option(
    '--priority <n>',
    what === 'batch'
      ? "priority of every item: 1 (highest) to 5, default each item spec's `priority` or 3; slots go to better priorities first"
      : "1 (highest) to 5, default the spec's `priority` or 3; slots go to better priorities first",
    priorityOption,
  );
  if (what === 'pipeline') return command;
  return command
    .option(
      '--fairness-key <key>',
      "the batch's key in the fair share of slots (default: the batch id); batches with one key share its part",
      fairnessKeyOption,
    )
    .option(
      '--fairness-weight <w>',
      "the key's weight in the fair share (default 1): a key of weight 3 gets three slots for another's one",
      fairnessWeightOption,
    );
}

/** The flags given, as Temporal start options (nothing when none was given). */
export function schedulingStartOptions(options: { priority?: number; fairnessKey?: string; fairnessWeight?: number }): {
  priority?: Priority;
} {
  const priority: Priority = {
    ...(options.priority !== undefined ? { priorityKey: options.priority } : {}),
    ...(options.fairnessKey !== undefined ? { fairnessKey: options.fairnessKey } : {}),
    ...(options.fairnessWeight !== undefined ? { fairnessWeight: options.fairnessWeight } : {}),
  };
  return Object.keys(priority).length ? { priority } : {};
}

/**
 * The start options of a new run of a pipeline (`reelflow resume`): the priority, fairness key and
 * weight Temporal kept for the earlier run (a batch item's key is its batch's), else the spec's
 * `priority`; a resumed pipeline keeps its place in the slots' order.
 */
export function resumedStartOptions(
  earlier: Priority | undefined,
  spec: { priority?: number },
): { priority?: Priority } {
  // Temporal reports a field never set as 0 or "".
  return schedulingStartOptions({
    priority: earlier?.priorityKey || spec.priority,
    fairnessKey: earlier?.fairnessKey || undefined,
    fairnessWeight: earlier?.fairnessWeight || undefined,
  });
}
