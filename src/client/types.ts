import type {
  AccountLedger,
  CancelResponse,
  KeyLookup,
  GenerationRequest,
  JobResult,
  ModelId,
  ModelInputs,
  QuoteResponse,
  StatusResponse,
} from '../contract';
import type { IdempotencySetting } from './submit-policy';

/** When and how often a call is retried; data, not code, so each call kind states its own rule. */
export interface RetryRule {
  /** Attempts in total, the first included. */
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** 0..1: the share of each delay that is randomised. */
  jitter: number;
}

export interface ServiceClientOptions {
  /** `{base_url}` of the spec, e.g. `https://api.example.com` or `http://127.0.0.1:8787`. */
  baseUrl: string;
  apiKey: string;
  /** Authorization scheme; the spec accepts `Key` (default) and `Bearer`. */
  authScheme?: 'Key' | 'Bearer';
  /** Per-call timeout in ms (default 30 s). */
  timeoutMs?: number;
  /** HTTP method for `cancel_url` (not shown in the spec; default POST). */
  cancelMethod?: 'POST' | 'PUT' | 'DELETE';
  /** Retry rule for idempotent calls (status, result, cancel, quote). */
  retry?: Partial<RetryRule>;
  /** Retry rule for submit: bounds every retry SUBMIT_POLICY allows (src/client/submit-policy.ts). */
  submitRetry?: Partial<RetryRule>;
  /**
   * Whether the service honours `Idempotency-Key` (REELFLOW_SERVICE_IDEMPOTENCY). `honoured`: a submit
   * that may have been sent is retried with the same key; `unknown` (default): it is ambiguous.
   */
  idempotency?: IdempotencySetting;
  /** Counts every HTTP call by kind; benchmarks and tests read it. */
  onRequest?: (kind: CallKind) => void;
  /**
   * Every answer of the service by call kind and HTTP status (`network` when none arrived): the 429
   * share and error rates an operator alerts on (reelflow_service_requests_total).
   */
  onResponse?: (kind: CallKind | 'ledger' | 'lookup', status: number | 'network') => void;
  /**
   * The account's shared back-off (src/client/account-limits.ts): every call waits for it first, and
   * a 429 with Retry-After extends it for every caller of the account, not only this one.
   */
  rateGate?: RateGate;
}

/** One back-off per kind of call, shared by every client of an account. */
export interface RateGate {
  /** Resolves once calls of `kind` may go out (stops early when `signal` aborts). */
  wait(kind: CallKind, signal?: AbortSignal): Promise<void>;
  /** The service answered a call of `kind` with 429 and Retry-After: nobody calls again before it passes. */
  limited(kind: CallKind, retryAfterMs: number): void;
}

export type CallKind = 'submit' | 'status' | 'result' | 'cancel' | 'quote';

/** Typed HTTP client of the service. Errors are `ServiceClientError` subclasses (see errors.ts). */
export interface ServiceClient {
  /** The submit policy's setting this client was made with (absent: `unknown`). */
  readonly idempotency?: IdempotencySetting;
  /**
   * Queues a job. `idempotencyKey` is sent as `Idempotency-Key`; `signal` stops the call and its
   * retries (an activity passes its cancellation and deadline); `attempts` caps the tries below the
   * client's submit rule (1: a caller that leaves a refused submit to someone else, without waiting).
   */
  submit<M extends ModelId>(
    model: M,
    input: ModelInputs[M],
    options?: { idempotencyKey?: string; signal?: AbortSignal; attempts?: number },
  ): Promise<GenerationRequest>;
  /** Reads a job's state; pass `statusUrl` from the submit answer to follow it as given. */
  status(requestId: string, options?: { statusUrl?: string }): Promise<StatusResponse>;
  /** Reads a COMPLETED job's result. */
  result(requestId: string, options?: { responseUrl?: string }): Promise<JobResult>;
  /** Asks the service to cancel; follows `cancelUrl` when given. */
  cancel(requestId: string, options?: { cancelUrl?: string }): Promise<CancelResponse>;
  /**
   * The account's credit movements (`GET /v1/account/ledger`, a local-service extension), for finding
   * orphaned jobs; null when the service has no such route (404/405).
   */
  ledger(): Promise<AccountLedger | null>;
  /**
   * Jobs an Idempotency-Key created (`GET /v1/queue/requests?idempotency_key=`, a local-service
   * extension); null when the service has no such route (404/405).
   */
  lookupKey(idempotencyKey: string): Promise<KeyLookup | null>;
  /** Exact credit cost of a submission, priced by the service. */
  quote<M extends ModelId>(model: M, input: ModelInputs[M]): Promise<QuoteResponse>;
}
