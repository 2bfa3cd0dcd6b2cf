/**
 * Webhook bridge benchmark (a script, not a test): `npx tsx bench/bridge.ts`.
 *
 * On loopback it starts a Temporal dev server, a worker (route + stand-in subscriber workflows) and the
 * bridge, then sends N signed deliveries with bounded concurrency and prints:
 *  - verified deliveries per second through the bridge into Temporal (every answer a 202);
 *  - latency from sending a delivery to the subscriber workflow observing the event (p50/p99);
 *  - a baseline in the same run: the same HTTP app and signature check with a sink that does nothing
 *    (verify + parse only, no Temporal), and the ratio between the two.
 * The bridge routes as it does in production (docs/decisions/bridge.md): verify, append to the route
 * store's inbox (group commit), answer 202; its forwarder signals the subscriber named by the store's
 * row. (Earlier designs — a rendezvous workflow, then describe + signal per delivery — are gone;
 * their figures stay in bench/results/bridge-designs.json.) BENCH_ROUTE_STORE picks the store
 * (default SQLite in a temporary folder; a postgres:// URL for PostgreSQL).
 * Results also go to .bench/bridge-designs.json (docs/decisions/bridge.md reads them).
 *
 * How "observed" is measured: the stand-in subscriber workflow records `Date.now()` in its jobEvent signal
 * handler. Inside a workflow that is the start time of the workflow task that delivered the signal (the
 * server's clock, same machine), i.e. the moment workflow code first saw the event. The bench reads those
 * times with the workflows' results after the run, so measuring adds no load during it.
 *
 * Env: BENCH_N (default 2000, max 20000), BENCH_CONCURRENCY (default 16), BENCH_SUBSCRIBERS (default 16).
 */
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { Pool } from 'undici';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { startDevServer } from '../test/helpers/temporal';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBridgeApp, type EventSink } from '../src/bridge';
import { Inbox, createRouteSubscriber, openRouteStore, startForwarder, type RouteStore } from '../src/routing';
import { parseRouteStoreLocation } from '../src/config/route-store-location';
import type { WebhookEvent } from '../src/contract';
import { signedHeaders } from '../src/contract/signature';
import type { SubscriberState } from '../test/integration/bridge.workflows';
import { makeEvent as makeTestEvent, testSubscriberActivities } from '../test/integration/bridge-fixtures';
import { runBench, writeBenchJson } from './bench-output';
import { percentile, round } from './lib/stats';

const N = Math.min(Number(process.env.BENCH_N ?? 2000), 20_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 16);
const SECRETS = ['whsec_bench_old_000000', 'whsec_bench_new_111111'];
const TASK_QUEUE = `bench-bridge-${randomUUID()}`;
const PACED_N = Math.min(200, N);
const PACED_INTERVAL_MS = 50;

/** The same well-formed completion event the bridge tests send. */
function makeEvent(requestId: string): WebhookEvent {
  return makeTestEvent({ request_id: requestId });
}

/** Runs `task` for every item with at most `limit` in flight. */
async function pooled<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        await task(item);
      }
    }),
  );
}

interface Phase {
  /** Deliveries answered 503 at least once (and retried, as the service would). */
  retried503: number;
  seconds: number;
  perSecond: number;
  sentAt: Map<string, number>;
  answerMs: number[];
}

/** Sends one signed delivery per event (serialised and signed just before sending, as the service does). */
async function sendAll(
  url: string,
  events: WebhookEvent[],
  options: { concurrency?: number; intervalMs?: number } = {},
): Promise<Phase> {
  const concurrency = options.concurrency ?? CONCURRENCY;
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: concurrency });
  const sentAt = new Map<string, number>();
  const answerMs: number[] = [];
  let retried = 0;
  const started = performance.now();
  await pooled(events, concurrency, async (event) => {
    if (options.intervalMs) await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    const body = JSON.stringify(event);
    const headers = {
      'content-type': 'application/json',
      ...signedHeaders({
        id: event.event_id,
        timestamp: Math.floor(Date.now() / 1000),
        body,
        secrets: SECRETS,
        eventType: event.event_type,
      }),
    };
    const t0 = performance.now();
    sentAt.set(event.event_id, Date.now());
    // Like the service: a 503 (Temporal too slow for the deadline) is retried after a second.
    for (let attempt = 1; ; attempt += 1) {
      const response = await pool.request({ path: target.pathname, method: 'POST', body, headers });
      await response.body.dump();
      if (response.statusCode === 202) break;
      if (response.statusCode !== 503 || attempt >= 6)
        throw new Error(`delivery ${event.event_id} answered ${response.statusCode}`);
      retried += 1;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    answerMs.push(performance.now() - t0);
  });
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return {
    seconds,
    perSecond: events.length / seconds,
    sentAt,
    answerMs: answerMs.sort((a, b) => a - b),
    retried503: retried,
  };
}

/** Starts `groups` stand-in subscriber workflows and subscribes each to its share of `n` fresh request ids. */
async function subscribedGroup(
  client: Client,
  store: RouteStore,
  n: number,
  groups: number,
): Promise<{ requestIds: string[]; handles: WorkflowHandle[] }> {
  const requestIds = Array.from({ length: n }, () => `req-${randomUUID()}`);
  const shares = Array.from({ length: groups }, (_, i) => requestIds.filter((_, j) => j % groups === i));
  const subscriber = createRouteSubscriber(store);
  const handles = await Promise.all(
    shares.map((ids, i) =>
      client.workflow.start('testSubscriberWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: `bench-subscriber-${i}-${randomUUID()}`,
        args: [ids, { subscribe: false }],
      }),
    ),
  );
  await pooled(
    shares.flatMap((ids, i) => ids.map((id) => [id, handles[i]!.workflowId] as const)),
    32,
    async ([id, workflowId]) => {
      await subscriber.subscribe(id, workflowId);
    },
  );
  return { requestIds, handles };
}

/** Waits for the stand-in workflows to see every event; returns sorted send-to-observed latencies. */
async function observedLatencies(handles: WorkflowHandle[], sentAt: Map<string, number>): Promise<number[]> {
  const states = (await Promise.all(handles.map((handle) => handle.result()))) as SubscriberState[];
  const observed = states.flatMap((state) => state.events);
  if (observed.length !== sentAt.size)
    throw new Error(`expected ${sentAt.size} observed events, got ${observed.length}`);
  return observed.map((seen) => seen.observedAt - sentAt.get(seen.event_id)!).sort((a, b) => a - b);
}

async function listen(app: FastifyInstance): Promise<string> {
  return `${await app.listen({ host: '127.0.0.1', port: 0 })}/webhooks`;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const noop = () => undefined;
  console.log(
    `bench/bridge: N=${N} deliveries, concurrency ${CONCURRENCY}, ${SUBSCRIBERS} subscriber workflows, node ${process.version}`,
  );
  const env = await startDevServer();
  // The route store: BENCH_ROUTE_STORE (e.g. a postgres:// URL), else SQLite in a temporary folder.
  const store = openRouteStore(
    parseRouteStoreLocation(
      process.env.BENCH_ROUTE_STORE ?? `sqlite:${join(mkdtempSync(join(tmpdir(), 'bench-bridge-')), 'routes.sqlite')}`,
    ),
  );
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../test/integration/bridge.workflows'),
    logger: { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop },
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: bundle,
    activities: testSubscriberActivities(store),
  });
  const workerRun = worker.run();
  const apps: FastifyInstance[] = [];
  const stops: (() => Promise<void>)[] = [];
  try {
    // Baseline: identical HTTP path and verification, but the event goes nowhere.
    const nullSink: EventSink = { deliver: async () => undefined, ready: async () => true };
    const baselineApp = await createBridgeApp({ secrets: SECRETS, sink: nullSink, logger: false });
    apps.push(baselineApp);
    const baselineUrl = await listen(baselineApp);
    await sendAll(
      baselineUrl,
      Array.from({ length: Math.min(200, N) }, () => makeEvent(`warm-${randomUUID()}`)),
    );
    const baseline = await sendAll(
      baselineUrl,
      Array.from({ length: N }, () => makeEvent(`base-${randomUUID()}`)),
    );

    // Setup (not timed): subscribers subscribe first, as pipelines do once the submit returns.
    const setupStarted = performance.now();
    const saturated = await subscribedGroup(env.client, store, N, SUBSCRIBERS);
    const paced = await subscribedGroup(env.client, store, PACED_N, 4);
    const setupSeconds = (performance.now() - setupStarted) / 1000;

    const inbox = new Inbox({ store, backlogLimit: 1_000_000 });
    const forwarder = startForwarder({ store, client: env.client, inbox, ttlMs: 24 * 3600_000 });
    stops.push(() => forwarder.stop());
    const sink = inbox;
    const app = await createBridgeApp({ secrets: SECRETS, sink, logger: false });
    apps.push(app);
    const url = await listen(app);

    // 1. Throughput: N deliveries, CONCURRENCY in flight, as fast as the bridge answers.
    const real = await sendAll(url, saturated.requestIds.map(makeEvent));
    const endToEnd = await observedLatencies(saturated.handles, real.sentAt);
    // Sustained rate into the workflows: every event observed, from the first send to the last observation.
    const firstSent = Math.min(...real.sentAt.values());
    const lastObserved =
      firstSent + Math.max(...[...real.sentAt.values()].map((t) => t - firstSent)) + endToEnd[endToEnd.length - 1]!;
    const intoWorkflowsPerSecond = N / ((lastObserved - firstSent) / 1000);
    // 2. Latency when not saturated: PACED_N deliveries one at a time, PACED_INTERVAL_MS apart.
    const pacedRun = await sendAll(url, paced.requestIds.map(makeEvent), {
      concurrency: 1,
      intervalMs: PACED_INTERVAL_MS,
    });
    const pacedLatency = await observedLatencies(paced.handles, pacedRun.sentAt);

    const result = {
      date: new Date().toISOString(),
      machine: { node: process.version, platform: process.platform, cpus: cpus().length },
      n: N,
      concurrency: CONCURRENCY,
      subscribers: SUBSCRIBERS,
      bridge: {
        deliveriesPerSecond: round(real.perSecond),
        /** Upper bound of the time to the last observation; the sustained rate of signals into workflows. */
        intoWorkflowsPerSecond: round(intoWorkflowsPerSecond),
        retried503: real.retried503,
        seconds: round(real.seconds, 2),
        answerMs: { p50: round(percentile(real.answerMs, 50)), p99: round(percentile(real.answerMs, 99)) },
        deliveryToWorkflowMs: {
          p50: percentile(endToEnd, 50),
          p99: percentile(endToEnd, 99),
          max: endToEnd[endToEnd.length - 1],
        },
        paced: {
          n: PACED_N,
          intervalMs: PACED_INTERVAL_MS,
          answerMs: { p50: round(percentile(pacedRun.answerMs, 50)), p99: round(percentile(pacedRun.answerMs, 99)) },
          deliveryToWorkflowMs: {
            p50: percentile(pacedLatency, 50),
            p99: percentile(pacedLatency, 99),
            max: pacedLatency[pacedLatency.length - 1],
          },
        },
      },
      baselineVerifyOnly: {
        deliveriesPerSecond: round(baseline.perSecond),
        seconds: round(baseline.seconds, 2),
        answerMs: { p50: round(percentile(baseline.answerMs, 50)), p99: round(percentile(baseline.answerMs, 99)) },
      },
      ratioBridgeToBaseline: round(real.perSecond / baseline.perSecond, 3),
      setupSubscribeSeconds: round(setupSeconds, 2),
    };

    console.log(
      `baseline (HTTP + verify + parse, no Temporal): ${result.baselineVerifyOnly.deliveriesPerSecond} deliveries/s, answer p50 ${result.baselineVerifyOnly.answerMs.p50} ms, p99 ${result.baselineVerifyOnly.answerMs.p99} ms`,
    );
    console.log(
      `bridge (verified + committed to the route store's inbox, 202 after the commit): ${result.bridge.deliveriesPerSecond} acknowledged deliveries/s, answer p50 ${result.bridge.answerMs.p50} ms, p99 ${result.bridge.answerMs.p99} ms`,
    );
    console.log(
      `forwarder (batched, throttled signals into the subscriber workflows, beside the burst): at least ${result.bridge.intoWorkflowsPerSecond} events/s sustained`,
    );
    console.log(
      `delivery -> subscriber workflow observed it: p50 ${result.bridge.deliveryToWorkflowMs.p50} ms, p99 ${result.bridge.deliveryToWorkflowMs.p99} ms, max ${result.bridge.deliveryToWorkflowMs.max} ms`,
    );
    console.log(
      `paced (${PACED_N} deliveries, one every ${PACED_INTERVAL_MS} ms): answer p50 ${result.bridge.paced.answerMs.p50} ms, p99 ${result.bridge.paced.answerMs.p99} ms; delivery -> workflow p50 ${result.bridge.paced.deliveryToWorkflowMs.p50} ms, p99 ${result.bridge.paced.deliveryToWorkflowMs.p99} ms`,
    );
    console.log(
      `ratio bridge/baseline throughput: ${result.ratioBridgeToBaseline} (setup: ${N} subscriptions in ${result.setupSubscribeSeconds} s)`,
    );
    writeBenchJson('bridge-designs', result);
  } finally {
    for (const app of apps) await app.close();
    for (const stop of stops) await stop();
    await store.close();
    worker.shutdown();
    await workerRun;
    await env.teardown();
  }
}

runBench(main);
