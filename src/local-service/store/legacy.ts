import type { EventBodyStore, InputStore } from './side-files';
import type { LegacyInline } from './records';
import type { ServiceState } from './state';

/**
 * Journals written before inputs and event bodies became files kept them inline. Moves what is
 * still needed (inputs of live jobs, bodies of pending deliveries) to files and drops the rest,
 * before the start's compaction writes the state without them.
 */
export function moveInlineData(state: ServiceState, inputs: InputStore, bodies: EventBodyStore): void {
  for (const job of state.jobs.values()) {
    const legacy = job as typeof job & LegacyInline;
    if (legacy.input === undefined) continue;
    if (job.status === 'IN_QUEUE' || job.status === 'IN_PROGRESS') inputs.write(job.id, legacy.input);
    delete legacy.input;
  }
  for (const delivery of state.deliveries.values()) {
    const legacy = delivery as typeof delivery & LegacyInline;
    if (legacy.body === undefined) continue;
    if (delivery.state === 'pending') bodies.write(delivery.eventId, legacy.body);
    delete legacy.body;
  }
}
