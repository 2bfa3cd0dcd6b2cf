import type { JobState, ModelId, ModelInput } from '../../contract';

/** Fields older journals kept inline; moved out to files when such a journal is opened. */
export interface LegacyInline {
  input?: ModelInput;
  body?: string;
}

/**
 * A job as the service keeps it. Timestamps are ms since the epoch. The input is not here: it is
 * a file (`inputs/<id>/input.json`, see InputStore), written before the job's record, so memory
 * and journal do not grow with inline data URIs.
 */
export interface JobRecord {
  id: string;
  model: ModelId;
  status: JobState;
  /** `Idempotency-Key` of the submit, if any, and the hash of the body it came with. */
  idempotencyKey: string | null;
  bodyHash: string;
  creditsCharged: number;
  creditsRefunded: number;
  /** Seconds the per-second price was based on (null for the long-form model). */
  billedSeconds: number | null;
  /** When the submit request arrived, before any fetch or pricing (absent in older journals). */
  receivedAt?: number;
  /** When the job was created, after pricing. */
  submittedAt: number;
  /** The request whose output this job's `video_url` names (a chained step), if any (absent in older journals). */
  inputRequestId?: string | null;
  startedAt: number | null;
  completedAt: number | null;
  /** Result document once COMPLETED. */
  result: Record<string, unknown> | null;
  /** `{code, message}` once FAILED or CANCELLED. */
  error: { code: string; message: string } | null;
}

/** An API key; only the SHA-256 of the key is kept. */
export interface KeyRecord {
  id: string;
  hash: string;
  createdAt: number;
  revokedAt: number | null;
}

/** A registered webhook endpoint. Secrets are kept raw: signing needs them. */
export interface EndpointRecord {
  id: string;
  url: string;
  secret: string;
  /** Previous secret during a rotation's grace period, and when that period ends (ms). */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  createdAt: number;
  /**
   * Event kinds this endpoint receives. Absent (endpoints registered before the field existed, or
   * without it): `generation.completed` only, the one kind the spec shows.
   */
  events?: string[];
}

export type LedgerKind = 'seed' | 'charge' | 'refund' | 'grant';

/** One credit movement; the balance is the sum of `amount` over the ledger. */
export interface LedgerEntry {
  seq: number;
  kind: LedgerKind;
  /** Signed: negative for a charge. */
  amount: number;
  requestId: string | null;
  at: number;
}

/** `dropped`: never sent (fault injection); `abandoned`: its endpoint was deleted. */
export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'abandoned' | 'dropped';

/**
 * One webhook event on its way to one endpoint. The body (the exact bytes sent on every attempt)
 * is the file `events/<eventId>.json`, written before this record.
 */
export interface DeliveryRecord {
  id: string;
  eventId: string;
  eventType: string;
  requestId: string;
  endpointId: string;
  state: DeliveryState;
  attempts: number;
  /** When the next attempt is due (ms), null once settled. */
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  /** Whether the duplicate-delivery fault should resend it after success. */
  duplicate: boolean;
  /**
   * Every attempt as the service made it (journalled, so restarts keep it): when it was sent, when its
   * outcome was known, and when the next one was scheduled. Tests check the retry schedule from it.
   */
  attemptLog?: DeliveryAttemptRecord[];
}

/** One delivery attempt, journalled with its outcome. */
export interface DeliveryAttemptRecord {
  /** When the schedule said to send it (the first: creation + delivery delay; a retry: the previous end + its delay). */
  dueAt: number;
  sentAt: number;
  endedAt: number;
  status: number | null;
  /** When the next attempt is due, null when this one settled the delivery. */
  nextAttemptAt: number | null;
}

/**
 * A fault the service injected (fault injection, for tests), journalled when it fires so a test can
 * explain each outcome from what really happened, across restarts. Dropped deliveries are not
 * repeated here: their delivery record (state `dropped`) is the record.
 */
export interface InjectedFaultRecord {
  seq: number;
  /**
   * `submit_error`: a submit answered 500/503/429 before any job was created; `submit_answer_dropped`:
   * the job was created and billed, the socket closed without an answer; `job_failed`: a job ended
   * FAILED by `failureRate`; `delivery_duplicated`: a delivered event was sent once more;
   * `cancel_delayed`: a cancel was answered with the live state and took effect `cancelDelayMs` later.
   */
  kind: 'submit_error' | 'submit_answer_dropped' | 'job_failed' | 'delivery_duplicated' | 'cancel_delayed';
  /** The job concerned (null for a submit error: no job exists). */
  requestId: string | null;
  /** The submit's `Idempotency-Key`, if any. */
  idempotencyKey: string | null;
  /** HTTP status of an injected submit error. */
  status?: number;
  /** The event of a duplicated delivery. */
  eventId?: string;
  at: number;
}

/** One line of the journal. Every change of durable state is one of these. */
export type JournalEntry =
  | { t: 'key.created'; key: KeyRecord }
  | { t: 'key.revoked'; id: string; at: number }
  | { t: 'ledger'; entry: LedgerEntry }
  | { t: 'job.created'; job: JobRecord; charge: LedgerEntry }
  | {
      t: 'job.transition';
      id: string;
      to: JobState;
      at: number;
      result?: Record<string, unknown>;
      error?: { code: string; message: string };
      refund?: LedgerEntry;
      /** The terminal event's deliveries, in the same record: no crash separates them from the outcome. */
      deliveries?: DeliveryRecord[];
    }
  | { t: 'endpoint.created'; endpoint: EndpointRecord }
  | { t: 'endpoint.rotated'; id: string; secret: string; previousSecret: string; previousSecretExpiresAt: number }
  | { t: 'endpoint.deleted'; id: string }
  | { t: 'delivery.created'; delivery: DeliveryRecord }
  | {
      t: 'delivery.attempted';
      id: string;
      attempts: number;
      state: DeliveryState;
      nextAttemptAt: number | null;
      lastStatus: number | null;
      lastError: string | null;
      /** Absent in journals written before attempts were logged. */
      dueAt?: number;
      sentAt?: number;
      endedAt?: number;
    }
  | { t: 'fault'; fault: InjectedFaultRecord }
  | { t: 'snapshot'; state: SnapshotState };

/** Everything durable, as written by a compaction. */
export interface SnapshotState {
  jobs: JobRecord[];
  keys: KeyRecord[];
  endpoints: EndpointRecord[];
  ledger: LedgerEntry[];
  deliveries: DeliveryRecord[];
  /** Absent in snapshots written before faults were journalled. */
  injectedFaults?: InjectedFaultRecord[];
}
