import { z } from 'zod';
import { MODEL_IDS, type ModelId } from '../contract';
import type { InjectedFaultRecord } from './store/records';
import type { ServiceState } from './store/state';
import type { Store } from './store/store';

/**
 * Fault injection of the local service, for tests and benchmarks. Set at start
 * (`faults` option) or at run time (`PUT /v1/admin/faults`, `LocalService.setFaults`).
 * Not durable: a restart comes back with the start-time faults.
 */
const rate = z.number().min(0).max(1);
const durationRecord = z.partialRecord(z.enum(MODEL_IDS), z.number().int().min(0));

export const faultConfigSchema = z.strictObject({
  /** Share of jobs that end FAILED (refunded) instead of COMPLETED. */
  failureRate: rate,
  /** Minimum IN_PROGRESS time in ms, for all models or per model; 0 = as fast as the render. */
  modelDurationMs: z.union([z.number().int().min(0), durationRecord]),
  /** Share of webhook events never delivered at all (the client must poll). */
  dropDeliveryRate: rate,
  /** Share of successful deliveries sent a second time (same event_id). */
  duplicateDeliveryRate: rate,
  /** Delay in ms before the first attempt of every delivery. */
  deliveryDelayMs: z.number().int().min(0),
  /** Adds a random extra delay to each first attempt so later events can overtake earlier ones. */
  reorderDeliveries: z.boolean(),
  /** Share of submits answered with `submitErrorStatus` before any job is created. */
  submitErrorRate: rate,
  submitErrorStatus: z.union([z.literal(500), z.literal(503), z.literal(429)]),
  /** Retry-After (seconds) sent with injected 429/503 answers. */
  submitRetryAfterSeconds: z.number().int().min(0),
  /** Delay in ms added before every API answer. */
  responseDelayMs: z.number().int().min(0),
  /** Share of submits that create the job, then destroy the socket without an answer. */
  dropSubmitResponseRate: rate,
  /** Also emit `generation.failed` and `generation.cancelled` events. */
  failEventsEnabled: z.boolean(),
  /**
   * An asynchronous cancel: the cancel is accepted (202 with the job's live state) and takes effect
   * this many ms later, as a provider that stops a render in the background would (the spec does not
   * show the cancel answer). 0 = at once.
   */
  cancelDelayMs: z.number().int().min(0),
});

export type FaultConfig = z.infer<typeof faultConfigSchema>;

export const DEFAULT_FAULTS: FaultConfig = {
  failureRate: 0,
  modelDurationMs: 0,
  dropDeliveryRate: 0,
  duplicateDeliveryRate: 0,
  deliveryDelayMs: 0,
  reorderDeliveries: false,
  submitErrorRate: 0,
  submitErrorStatus: 503,
  submitRetryAfterSeconds: 1,
  responseDelayMs: 0,
  dropSubmitResponseRate: 0,
  failEventsEnabled: false,
  cancelDelayMs: 0,
};

export const partialFaultConfigSchema = faultConfigSchema.partial();

/** Merges a partial change into the current faults; throws a ZodError on a bad value. */
export function mergeFaults(current: FaultConfig, change: unknown): FaultConfig {
  const parsed = partialFaultConfigSchema.parse(change);
  return faultConfigSchema.parse({ ...current, ...stripUndefined(parsed) });
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Minimum IN_PROGRESS time of a model under the given faults. */
export function modelDurationFor(faults: FaultConfig, model: ModelId): number {
  return typeof faults.modelDurationMs === 'number' ? faults.modelDurationMs : (faults.modelDurationMs[model] ?? 0);
}

/** A coin toss with probability `p`; `random` is injectable so tests of the logic stay deterministic. */
export function chance(p: number, random: () => number = Math.random): boolean {
  return p > 0 && random() < p;
}

/**
 * Journals a fault as it fires (before its effect is acknowledged), so the service can report what
 * it really injected (`GET /v1/admin/faults/injected`), restarts included.
 */
export function journalFault(store: Store, fault: Omit<InjectedFaultRecord, 'seq' | 'at'>): void {
  store.commit({ t: 'fault', fault: { seq: store.state.nextFaultSeq(), at: Date.now(), ...fault } });
}

/** One fault the service injected, as it reports them: the journalled ones plus those its records already show. */
export interface InjectedFault {
  /** The journalled kinds, plus `delivery_dropped` (a delivery never sent) and `service_restarted` (a job failed by a restart). */
  kind: InjectedFaultRecord['kind'] | 'delivery_dropped' | 'service_restarted';
  requestId: string | null;
  idempotencyKey: string | null;
  status?: number;
  eventId?: string;
  at: number;
}

/** Every fault the service injected, oldest first (`GET /v1/admin/faults/injected`, `LocalService.injectedFaults`). */
export function injectedFaults(state: ServiceState): InjectedFault[] {
  const keyOf = (requestId: string) => state.jobs.get(requestId)?.idempotencyKey ?? null;
  const faults: InjectedFault[] = state.injectedFaults.map(({ seq, ...fault }) => (void seq, fault));
  for (const d of state.deliveries.values()) {
    if (d.state === 'dropped')
      faults.push({
        kind: 'delivery_dropped',
        requestId: d.requestId,
        idempotencyKey: keyOf(d.requestId),
        eventId: d.eventId,
        at: d.createdAt,
      });
  }
  for (const job of state.jobs.values()) {
    if (job.status === 'FAILED' && job.error?.code === 'service_restarted')
      faults.push({
        kind: 'service_restarted',
        requestId: job.id,
        idempotencyKey: job.idempotencyKey,
        at: job.completedAt ?? job.submittedAt,
      });
  }
  return faults.sort((a, b) => a.at - b.at);
}
