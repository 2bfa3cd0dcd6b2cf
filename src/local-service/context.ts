import type { FaultConfig } from './faults';
import type { QuoteLimiter } from './http/quote-limiter';
import type { ModelRunner } from './media/runner';
import type { JobManager } from './queue/jobs';
import type { InputStore } from './store/side-files';
import type { Store } from './store/store';
import type { WebhookDispatcher } from './webhooks/dispatcher';

/** Calls per endpoint, for benchmarks (how many status polls did a client make?). */
export interface ServiceCounters {
  submits: number;
  statusCalls: number;
  resultCalls: number;
  cancelCalls: number;
  quoteCalls: number;
  jobsCreated: number;
}

export type WebhookUrlCheck = (
  url: string,
  options: { allowPrivate: boolean },
) => Promise<{ ok: true } | { ok: false; reason: string }>;

/** Everything the routes need; built once per service instance. */
export interface ServiceContext {
  store: Store;
  /** Job inputs on disk (and clips fetched for pricing). */
  inputs: InputStore;
  /** Quote admission: per-key rate and concurrency bound. */
  quotes: QuoteLimiter;
  jobs: JobManager;
  dispatcher: WebhookDispatcher;
  runner: ModelRunner;
  /** Base URL of the service as clients see it, no trailing slash. */
  publicUrl: string;
  filesDir: string;
  allowPrivateWebhooks: boolean;
  /** Grace period of the previous secret after a rotation, in seconds. */
  secretGraceSeconds: number;
  checkWebhookUrl: WebhookUrlCheck;
  counters: ServiceCounters;
  getFaults(): FaultConfig;
  setFaults(change: unknown): FaultConfig;
}
