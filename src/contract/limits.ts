/**
 * Every numeric limit and allowed value of the service spec that is not one model's, in one place
 * (a model's own limits and values are in its module, src/contract/models/). Nothing else in
 * reelflow re-declares these: schemas, the local service, the bridge and the client all import them
 * from here.
 */
export const LIMITS = {
  webhookToleranceSeconds: 300,
  /** A webhook handler slower than this is retried needlessly by the service. */
  webhookHandlerBudgetSeconds: 10,
  webhookMaxAttempts: 6,
  /** Delays between webhook attempts: 1, 2, 4, 8, 16 s (6 attempts in total). */
  webhookRetryDelaysSeconds: [1, 2, 4, 8, 16] as readonly number[],
  webhookMaxRedirects: 3,
  webhookAllowedPorts: [443, 8443] as readonly number[],
  /** 4xx answers from a webhook receiver that are still retried. */
  webhookRetryableClientStatuses: [408, 425, 429] as readonly number[],
  /** A revoked key stops working within about this long, in seconds. */
  keyRevocationDelaySeconds: 60,
} as const;

/**
 * Limits the spec leaves open ("Maximum size of a request body, data URI or input file: not shown"),
 * as decided (docs/spec-decisions.md, row 19): the local service enforces them and reelflow's
 * preflight checks inputs against them before paying.
 */
export const DECIDED_LIMITS = {
  /** Largest input file the service fetches from a URL. */
  inputFileMaxBytes: 512 * 1024 * 1024,
  /** Largest request body, which bounds inline data URIs. */
  requestBodyMaxBytes: 50 * 1024 * 1024,
} as const;

export const PROCESSING_SPEEDS = ['standard', 'ultra-fast'] as const;
export type ProcessingSpeed = (typeof PROCESSING_SPEEDS)[number];

export const JOB_STATES = ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type JobState = (typeof JOB_STATES)[number];
export const TERMINAL_STATES: readonly JobState[] = ['COMPLETED', 'FAILED', 'CANCELLED'];

/** True once a job can no longer change state; clients stop polling then. */
export function isTerminalState(state: JobState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** Defaults the spec gives for every model (a model's own are in its module, src/contract/models/). */
export const DEFAULTS = {
  processingSpeed: 'standard' as ProcessingSpeed,
} as const;

/** Header names of webhook deliveries (the spec's neutral `Service-` prefix). */
export const WEBHOOK_HEADERS = {
  eventType: 'service-webhook-event-type',
  id: 'service-webhook-id',
  timestamp: 'service-webhook-timestamp',
  signature: 'service-webhook-signature',
} as const;

/**
 * reelflow's own limits on what it hands to Temporal (not the service's): Temporal refuses payloads
 * over 2 MB and histories over 50 MB, and replays every byte, so media travel as store references.
 */
export const MEDIA_LIMITS = {
  /** Largest serialised workflow input (a pipeline spec with its options) reelflow starts: 128 KiB. */
  payloadBudgetBytes: 128 * 1024,
  /** A user's data URI longer than this (characters) is moved into the media store before a start. */
  inlineDataUriMaxChars: 256 * 1024,
  /** Default lifetime of a signed URL the S3 store hands to the service, in seconds. */
  signedUrlLifetimeSeconds: 3600,
  /** Largest media file put into the store or archived (the longest 720p clips stay far below). */
  maxObjectBytes: 4 * 1024 * 1024 * 1024,
} as const;
