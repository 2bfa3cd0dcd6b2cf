/**
 * The hand-off of a prepared next submit, beside the naive poller, on one bench stack (the local
 * service with 500 ms stub renders, a Temporal dev server): what a design in which the webhook's
 * receiver submits the next job itself, then tells the pipeline, hands off in, where the floor probe
 * (run.ts) measures designs in which the webhook wakes the pipeline and the pipeline submits.
 *
 * The receiver is reelflow's bridge app with its inbox on a SQLite route store (verify the signature,
 * commit the delivery, answer 202); its sink then submits the next re-voicing with the completed job's
 * output and signals the chain's workflow (wf-prepared.ts: a search-attribute upsert and a fallback
 * timer per job, what a reelflow step's task costs Temporal beside its submit). No idempotency key,
 * budget, cancel or address check: a measurement of the path, not an implementation
 * (docs/decisions/pipelines.md, "Under 20 chains").
 *
 *   npx tsx bench/handoff-floor/prepared.ts
 *
 * PREPARED_CHAINS chains at once (default: the hand-off bench's 20) of its 10 re-voicings of 500 ms
 * jobs; PREPARED_ROUNDS rounds (default 2), each the prepared chains then the naive 500 ms poller's
 * (bench/procs/naive-client.ts) on the same stack. Prints each phase's hand-off p50 / p90 (service clocks: a job's completedAt → the next job's
 * receivedAt) and CPU ms per hand-off by process (`receiver` is this process: the receiver and the
 * chains' worker).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createServiceClient } from '../../src/client/service-client';
import { parseRouteStoreLocation } from '../../src/config/route-store-location';
import { createBridgeApp } from '../../src/bridge';
import { DEFAULT_BACKLOG_LIMIT } from '../../src/config/bridge';
import { freePort } from '../../src/stack/stack-state';
import type { WebhookEvent } from '../../src/contract';
import { Inbox, openRouteStore } from '../../src/routing';
import { silentWavDataUri } from '../../test/helpers/inputs';
import { HANDOFF_FULL, NAIVE_POLL_MS } from '../handoff';
import { cpuMeter, stackPids } from '../lib/cpu';
import { driveNaive } from '../lib/drive';
import { handoffsOf } from '../lib/hops';
import { LONG_FORM, longFormInput, REVOICE } from '../lib/shapes';
import { BENCH_API_KEY, serviceCall, startBenchStack } from '../lib/stack';
import { summarize } from '../lib/stats';

const CHAINS = Number(process.env.PREPARED_CHAINS ?? HANDOFF_FULL.chains);
const ROUNDS = Number(process.env.PREPARED_ROUNDS ?? 2);
const { revoices: REVOICES, holdMs: HOLD_MS } = HANDOFF_FULL;

/** A chain waiting for its job `requestId` to complete. */
interface Waiting {
  workflowId: string;
  revoicesLeft: number;
  done: () => void;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const stack = await startBenchStack({ name: 'prepared', render: 'stub', stubHoldMs: HOLD_MS });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-prepared-'));
  const store = openRouteStore(parseRouteStoreLocation(`sqlite:${path.join(dir, 'routes.sqlite')}`));
  const service = createServiceClient({ baseUrl: stack.serviceUrl, apiKey: BENCH_API_KEY });
  const audio = silentWavDataUri();
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  const taskQueue = `prepared-${randomUUID().slice(0, 8)}`;
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: require.resolve('./wf-prepared'),
    activities: {},
  });
  const client = new Client({ connection });
  const waiting = new Map<string, Waiting>();

  const onCompleted = async (event: WebhookEvent): Promise<void> => {
    const chain = waiting.get(event.request_id);
    if (!chain || event.event_type !== 'generation.completed') return;
    waiting.delete(event.request_id);
    const pipeline = client.workflow.getHandle(chain.workflowId);
    if (chain.revoicesLeft === 0) {
      await pipeline.signal('submitted', 'end');
      chain.done();
      return;
    }
    const output = (event.data as { videos?: { url: string }[] }).videos?.[0]?.url;
    if (!output) throw new Error(`job ${event.request_id} completed without an output`);
    const next = await service.submit(REVOICE, { video_url: output, audio_url: audio });
    waiting.set(next.request_id, { ...chain, revoicesLeft: chain.revoicesLeft - 1 });
    await pipeline.signal('submitted', next.request_id);
  };

  const port = await freePort();
  const endpoint = await serviceCall(stack.serviceUrl, 'POST', '/v1/webhooks/endpoints', {
    url: `http://127.0.0.1:${port}/webhooks`,
  });
  const inbox = new Inbox({ store, backlogLimit: DEFAULT_BACKLOG_LIMIT });
  const receiver = await createBridgeApp({
    secrets: [String(endpoint.secret)],
    sink: {
      // Acknowledged once committed, as the bridge does; the next submit follows the commit.
      async deliver(event, body) {
        await inbox.deliver(event, body);
        onCompleted(event).catch((error: unknown) => {
          console.error(error);
          process.exitCode = 1;
        });
      },
      ready: () => inbox.ready(),
    },
    logger: false,
  });
  await receiver.listen({ host: '127.0.0.1', port });

  const preparedChains = () =>
    Promise.all(
      Array.from({ length: CHAINS }, async (_, i) => {
        const workflowId = `prepared-${randomUUID().slice(0, 8)}-${i}`;
        const pipeline = await client.workflow.start('preparedChain', { taskQueue, workflowId });
        const first = await service.submit(LONG_FORM, longFormInput());
        const ended = new Promise<void>((done) =>
          waiting.set(first.request_id, { workflowId, revoicesLeft: REVOICES, done }),
        );
        await pipeline.signal('submitted', first.request_id);
        await ended;
        await pipeline.result();
      }),
    );
  const naiveChains = () =>
    driveNaive(`prepared-naive-${randomUUID().slice(0, 6)}`, {
      serviceUrl: stack.serviceUrl,
      apiKey: BENCH_API_KEY,
      chains: CHAINS,
      revoices: REVOICES,
      pollMs: NAIVE_POLL_MS,
    });

  try {
    await worker.runUntil(async () => {
      const pids = { ...stackPids(stack), receiver: process.pid };
      for (let round = 1; round <= ROUNDS; round += 1) {
        for (const [label, drive] of [
          ['prepared', preparedChains],
          ['naive', naiveChains],
        ] as const) {
          const before = await stack.clocks();
          const known = new Set(before.jobs.map((job) => job.id));
          const cpu = cpuMeter(pids);
          await drive();
          const after = await stack.clocks();
          const jobs = after.jobs.filter((job) => !known.has(job.id));
          const handoffs = handoffsOf(jobs, new Map(after.jobs.map((job) => [job.id, job])));
          const { p50, p90, n } = summarize(handoffs);
          console.log(
            `round ${round} ${label}: ${CHAINS} chain(s), ${n} hand-offs, p50 ${p50} ms, p90 ${p90} ms; CPU ms per hand-off ${JSON.stringify(cpu(n))}`,
          );
        }
      }
    });
  } finally {
    await receiver.close();
    await service.close();
    await store.close();
    await connection.close();
    await stack.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
