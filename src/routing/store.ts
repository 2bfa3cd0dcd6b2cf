/**
 * The route store: which workflow waits for a request's webhook events, and the bridge's durable
 * inbox of verified deliveries. Two backends share this interface and one table layout:
 * `sqlite-store.ts` (node:sqlite, one file in the state directory) and `postgres-store.ts` (pg).
 *
 * Times are milliseconds since the epoch, taken from the caller's clock (never the database's), so
 * both backends and the tests agree on what "expired" means.
 */
import type { SlotStore } from './slot-store';

import type { TraceLinks } from './trace-links';

/** Who receives a request's events: any workflow, by id, through a named signal. */
export interface Subscription {
  requestId: string;
  /** Workflow id of the subscriber (a pipeline, or any workflow that waits for a job). */
  workflowId: string;
  /** Signal the forwarder sends; its first argument is the webhook event. */
  signalName: string;
  /** When set, passed as the signal's second argument, so one workflow can wait for several jobs by key. */
  stepKey?: string;
}

/** One verified delivery as the bridge appends it. */
export interface InboxEntry {
  eventId: string;
  requestId: string;
  /** The verified body as received (JSON text of the event). */
  body: string;
}

/** A pending delivery the forwarder claimed, with its subscription when one exists. */
export interface ClaimedDelivery {
  seq: number;
  eventId: string;
  requestId: string;
  body: string;
  receivedAt: number;
  subscription: Subscription | null;
}

/**
 * State of an inbox row. `pending`: not handed over yet; `forwarded`: signalled (or its subscriber is
 * gone); `taken`: handed to the subscribe call that came after it; `parked`: no subscriber showed up
 * soon after it arrived (a job reelflow did not submit, or an early event whose subscribe comes late):
 * kept until its TTL, and still handed to a subscribe that comes.
 */
export const INBOX_STATE = { pending: 0, forwarded: 1, taken: 2, parked: 3 } as const;

/**
 * State of a prepared submit (`reelflow_prepared`, ./prepared.ts). `ready`: written with its job's
 * subscription; `taken`: a bridge is submitting it; `submitted`: the bridge's answer is stored;
 * `revoked`: the pipeline ended first; `givenUp`: the bridge could not submit (the pipeline does);
 * `revokedWhileTaken`: the pipeline ended while a bridge submitted, so that bridge cancels the job;
 * `cancelledByBridge`: it did.
 */
export const PREPARED_STATE = {
  ready: 0,
  taken: 1,
  submitted: 2,
  revoked: 3,
  givenUp: 4,
  revokedWhileTaken: 5,
  cancelledByBridge: 6,
} as const;

/** A prepared submit a bridge took. */
export interface TakenPrepared {
  workflowId: string;
  /** The PreparedChain as JSON text. */
  chain: string;
}

/** What the pipeline's revoke found: the row's state after it, and the bridge's answer once it submitted. */
export interface RevokedPrepared {
  state: number;
  /** The GenerationRequest the bridge submitted, as JSON text (state `submitted`). */
  answer: string | null;
}

/** What `purge` removed. */
export interface PurgeCount {
  deliveries: number;
  subscriptions: number;
  /** Prepared submits, purged with their subscriptions. */
  prepared: number;
}

/** The operations both halves of routing need; every method rejects when the database cannot be reached. */
export interface RouteStore {
  readonly backend: 'sqlite' | 'postgres';
  /** The account's slots, shared by every worker on this store (./slot-store.ts). */
  readonly slots: SlotStore;
  /**
   * Names the subscriber of `subscription.requestId` (replacing an earlier one) and, in the same
   * statement, takes the deliveries that arrived before it: their bodies, oldest first. Idempotent:
   * a retried subscribe gets the same deliveries again (never one another subscribe was handed and
   * then forwarded). `prepared` (a PreparedChain as JSON text) is written in the same transaction, unless
   * the request already has one.
   */
  subscribe(subscription: Subscription, now: number, prepared?: string): Promise<string[]>;
  /**
   * Takes the prepared submit behind `requestId` for this bridge: one that is ready, or one another
   * bridge took more than `leaseMs` ago and never settled (it died; the same key makes the retry safe).
   */
  takePrepared(requestId: string, now: number, leaseMs: number): Promise<TakenPrepared | null>;
  /**
   * Records a taken submit's answer (`submitted`), or that there is none (`givenUp`); a row the pipeline
   * revoked meanwhile becomes `cancelledByBridge`. Returns the state it left.
   */
  settlePrepared(requestId: string, answer: string | null): Promise<number>;
  /** The pipeline will not submit what `requestId`'s row prepared: revokes it; null when there is no row. */
  revokePrepared(requestId: string): Promise<RevokedPrepared | null>;
  /** Appends verified deliveries in one transaction, skipping event ids already stored; returns how many were new. */
  append(entries: readonly InboxEntry[], now: number): Promise<number>;
  /**
   * Claims up to `limit` pending deliveries that are due (oldest first) for `leaseMs`: another
   * forwarder (or this one after a restart) takes them again only once the lease has run out.
   */
  claim(limit: number, now: number, leaseMs: number): Promise<ClaimedDelivery[]>;
  /** Marks deliveries handed over (signalled, or their subscriber is gone). */
  markForwarded(seqs: readonly number[]): Promise<void>;
  /** Leaves deliveries pending, due again at `dueAt` (Temporal refused them, or no subscriber yet). */
  retryAt(seqs: readonly number[], dueAt: number): Promise<void>;
  /** Parks pending deliveries whose request still has no subscriber; returns how many it parked. */
  park(seqs: readonly number[]): Promise<number>;
  /** Pending deliveries (the forwarder's backlog). */
  pendingCount(): Promise<number>;
  /** When the oldest undelivered delivery was received (ms), or null when none waits. */
  oldestPendingAt(): Promise<number | null>;
  /**
   * Deletes deliveries received before `deliveriesBefore` (forwarded, taken, or parked: foreign ones
   * after their TTL) and subscriptions (with their prepared submits) created before `subscriptionsBefore`.
   */
  purge(deliveriesBefore: number, subscriptionsBefore: number): Promise<PurgeCount>;
  /** Moves the write-ahead log into the database (SQLite opened with `checkpoints: 'caller'`); absent where the database does it itself. */
  checkpoint?(): Promise<void>;
  /** True when the database answers. Never throws. */
  ping(): Promise<boolean>;
  /** The trace context of each job's submit, for the bridge's spans (./trace-links.ts); absent in stores without it. */
  readonly traceLinks?: TraceLinks;
  close(): Promise<void>;
}

/** A backend's `ping`: true when `probe` runs without throwing, false (never a throw) when it does not. */
export async function answers(probe: () => unknown): Promise<boolean> {
  try {
    await probe();
    return true;
  } catch {
    return false;
  }
}

/** The bridge's half of a route store, which each backend implements: the inbox, and the purge of both halves. */
export type InboxMethods = Pick<
  RouteStore,
  'append' | 'claim' | 'markForwarded' | 'retryAt' | 'park' | 'pendingCount' | 'oldestPendingAt' | 'purge'
>;
