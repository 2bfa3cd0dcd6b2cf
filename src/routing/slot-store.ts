/**
 * The account's slots in the route store (`reelflow_slots`, `reelflow_slot_shares`, `reelflow_slot_log`):
 * one row per submission that holds a slot or waits for one, shared by every worker and bridge that
 * opens the same store (docs/decisions/account-slots.md). Both backends run the same statements
 * (./slot-programs.ts) in one serialised transaction per call, so a freed slot is handed to the next
 * waiter in the transaction that frees it.
 */

import type { GenerationRequest } from '../contract';

/** Priority of a job whose pipeline names none (Temporal's default on its 1 (highest) … 5 scale). */
export const SLOT_PRIORITY_DEFAULT = 3;

/**
 * State of a `reelflow_slots` row. `waiting`: in the queue; `granted`: handed over by a release whose
 * signal to the waiter is not known to have arrived; `held`: in use (taken at once, or signalled).
 */
export const SLOT_STATE = { waiting: 0, granted: 1, held: 2 } as const;

/** The caps slots are counted against: jobs in flight for the whole account, and per model. */
export interface SlotCaps {
  /** Undefined: no account-wide cap. */
  account?: number;
  /** Models without an entry are capped by the account's cap alone. */
  models: Readonly<Record<string, number>>;
}

/** A submission asking for a slot. */
export interface SlotRequest {
  /** The submission's Idempotency-Key: one slot per key, so a retried ask finds its own. */
  holder: string;
  workflowId: string;
  runId: string;
  model: string;
  /** 1 (highest) … 5. */
  priority: number;
  /** Slots are shared by weight between fairness keys (a batch's id, a lone pipeline's name). */
  fairnessKey: string;
  weight: number;
}

/** A waiter's submit larger than this (JSON bytes) is not kept: its pipeline submits it after the grant. */
export const WAITER_SUBMIT_MAX_BYTES = 64 * 1024;

/**
 * A waiting job's submit as it is sent (its media references resolved), kept beside its place in the
 * queue so whichever process frees a slot for it submits it at once with the holder as its
 * Idempotency-Key (./account-slots.ts); only where the service honours the key.
 */
export interface WaiterSubmit {
  model: string;
  input: Record<string, unknown>;
  /** Epoch ms after which the input's resolved media URLs may no longer be fetched: not sent after it. */
  validUntil?: number;
}

/** Whether `submit` may still be sent at `now` (its resolved media URLs have not expired). */
export function waiterSubmitValid(submit: WaiterSubmit, now: number): boolean {
  return submit.validUntil === undefined || submit.validUntil > now;
}

/** What a releasing process did for a granted holder (SlotStore.ahead). */
export interface WaiterAhead {
  /** The submit kept for it (sent by the releaser, or to be sent by the pipeline as it is). */
  submit?: WaiterSubmit;
  /** The job the releaser submitted for it. */
  request?: GenerationRequest;
}

/** A slot handed to a waiter: its workflow must be told (the `slotGranted` signal). */
export interface SlotGrant {
  holder: string;
  workflowId: string;
  runId: string;
  /** Absent on slots the reaper lists. */
  fairnessKey?: string;
  /** The waiter's submit (SlotStore.keepSubmit), on grants made by a release or a sweep while it is valid. */
  submit?: WaiterSubmit;
}

/** What freeing a slot did. */
export interface SlotRelease {
  /** The grants whose workflows must now be signalled. */
  grants: SlotGrant[];
  /**
   * The job a releasing process submitted for this holder (SlotStore.attachAhead) that its pipeline never
   * took as its own (SlotStore.attachRequest): nobody waits for it any more, so it must be cancelled.
   */
  unadopted?: GenerationRequest;
}

/** A slot in use, as the reaper looks at it. */
export interface HeldSlot extends SlotGrant {
  state: number;
  grantedAt: number;
}

/** One grant of the slot log. */
export interface SlotLogEntry {
  seq: number;
  holder: string;
  workflowId: string;
  model: string;
  priority: number;
  fairnessKey: string;
  grantedAt: number;
  releasedAt: number | null;
}

/** What the slots look like now (`reelflow status`, metrics). */
export interface SlotSnapshot {
  /** Slots in use (granted or held) by model. */
  heldByModel: Record<string, number>;
  /** Slots in use by fairness key. */
  heldByKey: Record<string, number>;
  /** Waiters by priority, then by fairness key. */
  waiting: { priority: number; fairnessKey: string; count: number }[];
}

/** The slot half of the route store; every method is one transaction (or one statement). */
export interface SlotStore {
  /**
   * Takes a slot for `request` when its model and the account are under their caps, else queues it
   * (a waiter row): `granted` (by this call) or `waiting`. Idempotent per holder: a second ask reports
   * the row's state without changing it, `held` (granted earlier, at once or by a release) or `waiting`.
   */
  acquire(request: SlotRequest, caps: SlotCaps, now: number): Promise<'granted' | 'held' | 'waiting'>;
  /**
   * Frees `holder`'s slot (or drops it from the queue) and, in the same transaction, grants the freed
   * room to the next waiters in order; with the job submitted ahead for it that its pipeline never adopted.
   */
  release(holder: string, caps: SlotCaps, now: number): Promise<SlotRelease>;
  /**
   * Names the job (`requestId`) `holder`'s slot was used for, so releaseRequest finds it: the pipeline's
   * own submit, which also adopts a job submitted ahead for it.
   */
  attachRequest(holder: string, requestId: string): Promise<void>;
  /**
   * Names the job a releasing process submitted for `holder` before its pipeline was told of the grant;
   * false when the slot is gone (its waiter left meanwhile): the caller cancels the job.
   */
  attachAhead(holder: string, request: GenerationRequest): Promise<boolean>;
  /** Keeps `submit` beside `holder`'s place in the queue; false when it is no longer waiting. */
  keepSubmit(holder: string, submit: WaiterSubmit): Promise<boolean>;
  /** The submit kept for a granted `holder` and the job a releaser submitted with it (empty when none). */
  ahead(holder: string): Promise<WaiterAhead>;
  /**
   * Frees the slot of job `requestId` (its terminal webhook arrived) and grants the room on, as release
   * does; nothing when no slot names that job (never attached, or freed already).
   */
  releaseRequest(requestId: string, caps: SlotCaps, now: number): Promise<SlotGrant[]>;
  /** Grants whatever room there is to waiters (after caps were raised, or a sweep): the grants made. */
  grantWaiting(caps: SlotCaps, now: number): Promise<SlotGrant[]>;
  /** Marks grants whose workflows were signalled (`granted` → `held`). */
  markSignalled(holders: readonly string[]): Promise<void>;
  /** Slots in use granted before `before` (the reaper's candidates), oldest first, at most `limit`. */
  heldSince(before: number, limit: number): Promise<HeldSlot[]>;
  /** The slots in use and the queue, counted. */
  snapshot(): Promise<SlotSnapshot>;
  /** Grants logged after `afterSeq`, oldest first, at most `limit`. */
  log(afterSeq: number, limit: number): Promise<SlotLogEntry[]>;
}
