/**
 * A batch under the local service's default limits against the same stack with the quote limit
 * widened, in one run (not part of `npm run bench`):
 *
 *   npx tsx bench/batch-quotes.ts [--items 1000] [--concurrency 16] [--cap 8] [--cap-items 200] [--no-build]
 *
 * Two fresh stacks in turn (every part its own process, stub renders with no hold), each running one
 * batch of three-step items (long-form → re-voice → upscale, the throughput bench's shape) started as
 * `reelflow batch` starts it (the manifest as JSON Lines in the worker's media store), after a 4-item
 * warm-up. Prints items/s of both and their ratio: reelflow's own calls must not make the service's
 * per-key quote limit (120 a minute, `--quotes-per-minute`) the batch's ceiling. A third stack runs a
 * batch under REELFLOW_ACCOUNT_CONCURRENCY (`--cap`), for what the account's cap costs per item:
 * history events (by type) and items/s, and the most jobs in flight the service saw.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { batchWorkflowId, pipelineWorkflowId } from '../src/workflows/definitions';
import { putJsonLines } from '../src/media/json-lines';
import { openMediaStore } from '../src/media/store';
import type { PipelineSpec } from '../src/pipeline-spec';
import type { BatchProgress, BatchWorkflowInput } from '../src/workflows/batch-types';
import { buildForBench, startBenchStack } from './lib/stack';
import { maxJobsInFlight } from '../test/helpers/jobs-in-flight';
import { specFor } from './lib/shapes';
import { round } from './lib/stats';

interface Args {
  items: number;
  concurrency: number;
  /** REELFLOW_ACCOUNT_CONCURRENCY of the third run, and its batch size. */
  cap: number;
  capItems: number;
  build: boolean;
}

function parseArgs(argv: string[]): Args {
  const value = (flag: string, fallback: number) => {
    const at = argv.indexOf(flag);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  return {
    items: value('--items', 1000),
    concurrency: value('--concurrency', 16),
    cap: value('--cap', 8),
    capItems: value('--cap-items', 200),
    build: !argv.includes('--no-build'),
  };
}

interface BatchRun {
  label: string;
  quotesPerMinute: number | 'default';
  items: number;
  completed: number;
  seconds: number;
  itemsPerSecond: number;
  /** Quote requests the service received (refused ones included). */
  quoteCalls: number;
  /** Most jobs in flight at once, from the service's job clocks. */
  maxJobsInFlight: number;
  eventsPerItem: number;
  eventsPerItemByType: Record<string, number>;
}

async function runBatch(
  label: string,
  quotesPerMinute: number | 'default',
  args: Args,
  items: number,
  workerEnv: NodeJS.ProcessEnv = {},
): Promise<BatchRun> {
  const limitsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-account-'));
  // The worker's media store, where the batch's manifest goes (as `reelflow batch` puts it).
  const mediaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-media-'));
  const { store } = openMediaStore({ kind: 'file', dir: mediaDir, urlLifetimeSeconds: 3600 });
  const stack = await startBenchStack({
    name: label,
    render: 'stub',
    bridge: true,
    worker: true,
    quotesPerMinute,
    workerEnv: { REELFLOW_ACCOUNT_LIMITS_DIR: limitsDir, REELFLOW_MEDIA_STORE: `file://${mediaDir}`, ...workerEnv },
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const start = async (name: string, specs: PipelineSpec[]): Promise<BatchProgress> => {
    const workflowId = batchWorkflowId(name);
    const manifest = await putJsonLines(
      store,
      specs.map((spec, index) => ({ index, spec })),
      workflowId,
      // Each item carries its voice track inline (~21 KB), unlike `reelflow batch`, which moves media into
      // the store: 20 items a page keep a page (an activity's result) far below Temporal's payload limit.
      20,
    );
    const input: BatchWorkflowInput = {
      name,
      manifest,
      concurrency: args.concurrency,
      uriRules: { allowedOrigins: [stack.serviceUrl] },
    };
    return (await client.workflow.execute('batchWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [input],
    })) as BatchProgress;
  };
  const client = new Client({ connection });
  try {
    const specs = [...Array(items).keys()].map((n) =>
      specFor({ type: 'three-step' }, `${label}-${n}`, stack.serviceUrl),
    );
    // Warm-up (not measured): the first jobs of a stack render the stub fixtures and fill the worker's caches.
    await start(
      `${label}-warm-up`,
      specs.slice(0, 4).map((spec) => ({ ...spec, name: `${spec.name}-w` })),
    );
    const before = (await stack.clocks()).counters;
    const started = Date.now();
    const result = await start(`${label}-batch`, specs);
    const seconds = (Date.now() - started) / 1000;
    const { counters: after, jobs } = await stack.clocks();
    // History events per item, by type, over a sample of the batch's pipelines.
    const sample = specs.slice(0, 20).map((spec) => ({ workflowId: pipelineWorkflowId(spec.name) }));
    const byType: Record<string, number> = {};
    for (const item of sample) {
      const history = await client.workflow.getHandle(item.workflowId).fetchHistory();
      for (const event of history.events ?? []) {
        const type = temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? 'unknown';
        byType[type] = (byType[type] ?? 0) + 1;
      }
    }
    const perItem = Object.fromEntries(
      Object.entries(byType)
        .sort(([, a], [, b]) => b - a)
        .map(([type, n]) => [type.replace(/^EVENT_TYPE_/, ''), round(n / sample.length, 2)]),
    );
    return {
      label,
      quotesPerMinute,
      items,
      completed: result.completed,
      seconds: round(seconds, 1),
      itemsPerSecond: round(result.completed / seconds, 2),
      quoteCalls: (after.quoteCalls ?? 0) - (before.quoteCalls ?? 0),
      maxJobsInFlight: maxJobsInFlight(jobs),
      eventsPerItem: round(Object.values(byType).reduce((a, b) => a + b, 0) / sample.length, 1),
      eventsPerItemByType: perItem,
    };
  } finally {
    await connection.close();
    await stack.stop();
    fs.rmSync(limitsDir, { recursive: true, force: true });
    fs.rmSync(mediaDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.build) buildForBench();
  console.log(`batch of ${args.items} three-step items, --concurrency ${args.concurrency}, stub renders`);
  const limited = await runBatch('default-limits', 'default', args, args.items);
  console.log(JSON.stringify(limited));
  const widened = await runBatch('widened-quotes', 1_000_000, args, args.items);
  console.log(JSON.stringify(widened));
  // The account's cap on jobs in flight, for its cost per job: the same batch under REELFLOW_ACCOUNT_CONCURRENCY.
  const capped = await runBatch('account-capped', 'default', args, args.capItems, {
    REELFLOW_ACCOUNT_CONCURRENCY: String(args.cap),
  });
  console.log(JSON.stringify(capped));
  const ratio = round(limited.itemsPerSecond / widened.itemsPerSecond, 2);
  console.log(
    `default limits: ${limited.itemsPerSecond} items/s (${limited.quoteCalls} quote calls); ` +
      `quote limit widened: ${widened.itemsPerSecond} items/s (${widened.quoteCalls} quote calls); ratio ${ratio}`,
  );
  console.log(
    `REELFLOW_ACCOUNT_CONCURRENCY=${args.cap}: ${capped.itemsPerSecond} items/s, at most ${capped.maxJobsInFlight} jobs in flight ` +
      `(uncapped: ${limited.maxJobsInFlight}); ${capped.eventsPerItem} history events per item (uncapped: ${limited.eventsPerItem})`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
