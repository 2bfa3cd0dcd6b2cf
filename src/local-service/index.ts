import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { resolveOptions, type LocalServiceOptions, type ResolvedOptions } from './config';
import type { ServiceContext, ServiceCounters } from './context';
import { injectedFaults, mergeFaults, type FaultConfig, type InjectedFault } from './faults';
import { buildApp, type RegisteredRoute } from './http/app';
import { hashKey, keyIdFor } from './http/auth';
import { checkWebhookUrl } from '../net';
import { QuoteLimiter } from './http/quote-limiter';
import type { TornTail } from './store/journal';
import { moveInlineData } from './store/legacy';
import { EventBodyStore, InputStore } from './store/side-files';
import { createFfmpegModelRunner, type ModelRunner } from './media/runner';
import { createStubModelRunner } from './media/stub-runner';
import { JobManager } from './queue/jobs';
import { newApiKey } from './routes/account';
import type { DeliveryRecord, JobRecord, LedgerEntry } from './store/records';
import { lockDataDir } from './store/data-dir-lock';
import { Store } from './store/store';
import { WebhookDispatcher } from './webhooks/dispatcher';

export type { LocalServiceOptions } from './config';
export type { FaultConfig, InjectedFault } from './faults';
export type { ServiceCounters } from './context';
export type { RegisteredRoute } from './http/app';
export { DEFAULT_FAULTS } from './faults';

/** Read-only view of a job for tests and benchmarks. */
export interface JobView {
  id: string;
  model: string;
  status: JobRecord['status'];
  idempotencyKey: string | null;
  creditsCharged: number;
  creditsRefunded: number;
  /** When the submit request arrived (before validation, fetching and pricing). */
  receivedAt: number;
  /** When the job was created (after pricing). */
  submittedAt: number;
  startedAt: number | null;
  /** When the job became terminal (COMPLETED, FAILED or CANCELLED). */
  completedAt: number | null;
  error: { code: string; message: string } | null;
}

/** Read-only view of a webhook delivery. */
export type DeliveryView = DeliveryRecord;

/** A running local service. */
export interface LocalService {
  /** Base URL (no trailing slash), e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Actual port it listens on. */
  port: number;
  /** A key generated at start when no key existed at all (shown once, never logged). */
  generatedApiKey: string | null;
  close(): Promise<void>;
  setFaults(change: Partial<FaultConfig>): void;
  faults(): FaultConfig;
  counters(): ServiceCounters;
  jobs(): JobView[];
  deliveries(): DeliveryView[];
  ledger(): LedgerEntry[];
  /** Every fault injected so far, restarts included (also `GET /v1/admin/faults/injected`). */
  injectedFaults(): InjectedFault[];
  /** Credit balance of the account (every key draws on the same one). */
  balance(apiKey?: string): number;
  /** Every route the HTTP app registered, with who may call it. */
  routes(): RegisteredRoute[];
  /** What the start found: a torn last journal record that was cut off, if any. */
  tornTail: TornTail | null;
  /** Current journal size (bytes): compaction keeps it near the live state's size. */
  journalBytes(): number;
}

/**
 * Starts the local service: replays its journal under `dataDir` (jobs caught IN_PROGRESS by a
 * crash end FAILED and refunded; pending webhook deliveries resume), seeds keys and credits,
 * and listens. Requests wait until recovery is done.
 */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const config = resolveOptions(options);
  const dataDir = path.resolve(config.dataDir);
  const { unlock, store, torn, inputs, bodies } = await openState(dataDir, config.compactAtBytes);
  const filesDir = path.join(dataDir, 'files');
  fs.mkdirSync(filesDir, { recursive: true });

  const generatedApiKey = seed(store, config.apiKeys, config.credits);

  let faults = config.faults;
  const counters = newCounters();
  let context: ServiceContext | null = null;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const { app, routes } = buildApp({
    context: () => {
      if (!context) throw new Error('local service context used before start');
      return context;
    },
    ready,
    logger: config.logger === false ? false : { ...config.logger, redact: [...REDACTED] },
    adminKeyHash: config.adminKey === undefined ? null : hashKey(config.adminKey),
    connections: config.connections,
  });

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    store.close();
    await unlock();
    throw error;
  }
  const port = (app.server.address() as { port: number }).port;
  const url = config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  const log = app.log;
  // The input access log (<dataDir>/input-access.log, JSON lines): which input URLs were fetched, signed or not.
  const inputLog = path.join(dataDir, 'input-access.log');
  const ffmpegRunner = createFfmpegModelRunner({
    allowPrivate: config.allowPrivateWebhooks,
    ownOrigin: url,
    ownFilesDir: filesDir,
    onInputFetch: (entry) => fs.appendFileSync(inputLog, `${JSON.stringify(entry)}\n`),
  });
  const runner: ModelRunner =
    config.render === 'stub'
      ? createStubModelRunner({
          fallback: ffmpegRunner,
          ownOrigin: url,
          fixturesDir: path.resolve(config.stubFixturesDir ?? path.join(dataDir, 'stub-fixtures')),
          holdMs: config.stubHoldMs,
        })
      : ffmpegRunner;
  if (torn) reportTornTail(torn, config.logger === false ? null : log);
  store.setLog(log);
  const dispatcher = new WebhookDispatcher({
    store,
    bodies,
    faults: () => faults,
    log,
    rules: { allowPrivate: config.allowPrivateWebhooks },
  });
  const jobs = new JobManager({
    store,
    runner,
    publicUrl: url,
    filesDir,
    inputs,
    concurrencyPerModel: config.concurrencyPerModel,
    faults: () => faults,
    deliveries: dispatcher,
    log,
  });
  context = {
    store,
    inputs,
    quotes: new QuoteLimiter(config.quoteLimits),
    jobs,
    dispatcher,
    runner,
    publicUrl: url,
    filesDir,
    allowPrivateWebhooks: config.allowPrivateWebhooks,
    secretGraceSeconds: config.secretGraceSeconds,
    checkWebhookUrl,
    counters,
    getFaults: () => faults,
    setFaults: (change) => (faults = mergeFaults(faults, change)),
  };
  dispatcher.recover();
  jobs.recover();
  // Bodies of events with no pending delivery (settled before a crash removed them) are not needed.
  bodies.sweep((eventId) =>
    [...store.state.deliveries.values()].some((d) => d.eventId === eventId && d.state === 'pending'),
  );
  markReady();
  warnOfLocalModes(config, log);

  return {
    url,
    port,
    generatedApiKey,
    close: closeOnce(async () => {
      await app.close();
      await jobs.close();
      await dispatcher.close();
      store.close();
      await unlock();
    }),
    setFaults: (change) => {
      faults = mergeFaults(faults, change);
    },
    faults: () => faults,
    tornTail: torn,
    ...stateViews(store, counters, routes),
  };
}

/** Never logged: the API key header and any field named secret or key. */
const REDACTED = ['req.headers.authorization', 'headers.authorization', 'secret', 'key'];

function newCounters(): ServiceCounters {
  return { submits: 0, statusCalls: 0, resultCalls: 0, cancelCalls: 0, quoteCalls: 0, jobsCreated: 0 };
}

/** `close` run once: a second call gets the first one's promise. */
function closeOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => (closing ??= close());
}

/**
 * Locks the data directory and opens its state: the journal (replayed), and the side files of inputs
 * and event bodies. The lock is released again when the state cannot be opened.
 */
async function openState(
  dataDir: string,
  compactAtBytes: number | undefined,
): Promise<{
  unlock: () => Promise<void>;
  store: Store;
  torn: TornTail | null;
  inputs: InputStore;
  bodies: EventBodyStore;
}> {
  // Before anything reads or rewrites the state: a second service on this directory stops here.
  const unlock = await lockDataDir(dataDir);
  const inputs = new InputStore(path.join(dataDir, 'inputs'));
  const bodies = new EventBodyStore(path.join(dataDir, 'events'));
  try {
    const { store, torn } = Store.open(path.join(dataDir, 'state'), {
      ...(compactAtBytes !== undefined ? { compactAtBytes } : {}),
      prepare: (state) => moveInlineData(state, inputs, bodies),
    });
    return { unlock, store, torn, inputs, bodies };
  } catch (error) {
    await unlock();
    throw error;
  }
}

/** Says that the journal's torn last record was cut off: in the log, or on stderr when there is none. */
function reportTornTail(torn: TornTail, log: FastifyBaseLogger | null): void {
  const line = `journal: a torn last record (${torn.bytes} bytes at offset ${torn.offset}) was cut off; it had not been acknowledged`;
  if (log === null) process.stderr.write(`reelflow service: ${line}\n`);
  else log.warn({ offset: torn.offset, bytes: torn.bytes }, line);
}

/** Warns of the modes meant for local use only. */
function warnOfLocalModes(config: ResolvedOptions, log: FastifyBaseLogger): void {
  if (config.render === 'stub')
    log.warn(
      `stub render mode (--render stub, hold ${config.stubHoldMs} ms): jobs complete with pre-rendered fixtures; a benchmarking aid`,
    );
  if (config.allowPrivateWebhooks)
    log.warn(
      'private, loopback and plain-http webhook and input URLs are allowed (--allow-private-webhooks): local use only',
    );
}

/** The read-only views of the service's state, for tests and benchmarks (copies, never the live records). */
function stateViews(
  store: Store,
  counters: ServiceCounters,
  routes: readonly RegisteredRoute[],
): Pick<
  LocalService,
  'counters' | 'jobs' | 'deliveries' | 'ledger' | 'injectedFaults' | 'balance' | 'routes' | 'journalBytes'
> {
  return {
    counters: () => ({ ...counters }),
    jobs: () => [...store.state.jobs.values()].map(viewJob),
    deliveries: () => [...store.state.deliveries.values()].map((d) => ({ ...d })),
    ledger: () => store.state.ledger.map((e) => ({ ...e })),
    injectedFaults: () => injectedFaults(store.state),
    balance: () => store.state.balance,
    routes: () => routes.map((r) => ({ ...r })),
    journalBytes: () => store.journalBytes,
  };
}

function viewJob(job: JobRecord): JobView {
  return {
    id: job.id,
    model: job.model,
    status: job.status,
    idempotencyKey: job.idempotencyKey,
    creditsCharged: job.creditsCharged,
    creditsRefunded: job.creditsRefunded,
    receivedAt: job.receivedAt ?? job.submittedAt,
    submittedAt: job.submittedAt,
    startedAt: job.startedAt,
    completedAt: job.completedAt,
    error: job.error,
  };
}

/**
 * Seeds the given keys (idempotent: a key's id derives from its hash; a revoked key stays
 * revoked) and, on a fresh data directory only, the credit balance. With no key at all, one is
 * generated and returned so the operator can be shown it once.
 */
function seed(store: Store, apiKeys: readonly string[], credits: number): string | null {
  const state = store.state;
  const fresh = state.ledger.length === 0 && state.keys.size === 0 && state.jobs.size === 0;
  for (const key of apiKeys) {
    const hash = hashKey(key);
    const id = keyIdFor(hash);
    if (!state.keys.has(id))
      store.commit({ t: 'key.created', key: { id, hash, createdAt: Date.now(), revokedAt: null } });
  }
  if (fresh && credits > 0) {
    store.commit({
      t: 'ledger',
      entry: { seq: state.nextLedgerSeq(), kind: 'seed', amount: credits, requestId: null, at: Date.now() },
    });
  }
  if (state.keys.size > 0) return null;
  const key = newApiKey();
  const hash = hashKey(key);
  store.commit({ t: 'key.created', key: { id: keyIdFor(hash), hash, createdAt: Date.now(), revokedAt: null } });
  return key;
}
