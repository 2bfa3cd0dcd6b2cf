/**
 * `npm run bench [-- --quick] [--only handoff,throughput,footprint,batch] [--cluster] [--worker-cache 250,250/256] [--out <dir>] [--no-report]`
 * `npm run bench -- --only batch [--items 10000] [--manifest-rows 100000]`
 * `npm run bench -- --only run-vs-poller [--rounds 5]`
 * `npm run bench -- --only scheduling [--waiters 10000] [--provider-items 10000] [--compare-items 1000]`
 * `npm run bench -- --only graph [--rounds 3]`
 *
 * Builds the compiled entry points (`npm run build`: dist/ and the pre-built workflow bundle), then
 * runs each bench with every part in its own process, writes `<out>/<bench>.json` (default `.bench`,
 * `.bench/quick` with --quick) and generates the report: in a full run the tables between the markers
 * of docs/benchmarks.md and the SVG charts in docs/benchmarks/; with --quick the same into <out>
 * (docs/ untouched). --quick runs every bench at a small size (≈2 min) so the harness cannot rot;
 * its figures mean nothing.
 *
 * --cluster: after the dev-server benches, the hand-off and throughput benches again on the real Temporal
 * cluster of `npm run cluster` (PostgreSQL, 4 history shards, one process per role; started if it is not
 * running, and stopped again afterwards in that case), written as `handoff-cluster.json` and
 * `throughput-cluster.json` and reported beside the dev server's figures.
 *
 * batch (bench/batch.ts) runs only when named in --only: a 10,000-item batch through the real CLI takes
 * most of an hour, the default run stays short. `--items` and `--manifest-rows` size it down; a run at
 * another size than the full one reports into <out> (default `.bench/small`), never into docs/.
 *
 * run-vs-poller (bench/run-vs-poller.ts) runs only when named in --only: `reelflow run` of a seven-job
 * chain against the naive poller on one ffmpeg stack, alternating, `--rounds` rounds (default 5); its
 * figures and the fixed-cost split go to the log and `<out>/run-vs-poller.json`.
 *
 * --worker-cache n[/heapMiB],…: the footprint bench again with the worker's workflow cache capped at n
 * (REELFLOW_MAX_CACHED_WORKFLOWS) and, with /heapMiB, its V8 old space capped (NODE_OPTIONS
 * --max-old-space-size), written as `footprint-cache-<n>[-heap-<m>].json` / `bridge-cache-…json`: memory
 * held against the cost of replaying evicted pipelines when their deliveries come.
 */
import * as path from 'node:path';
import { runFootprintAndBridge, FOOTPRINT_FULL, FOOTPRINT_QUICK } from './footprint';
import { runHandoff, HANDOFF_FULL, HANDOFF_QUICK } from './handoff';
import { killAll, setLogDir } from './lib/processes';
import { runInfo, startLoadSampler, writeJson } from './lib/run-info';
import { buildForBench, ROOT } from './lib/stack';
import { BATCH_FULL, BATCH_QUICK, runBatch, type BatchSize } from './batch';
import { defaultClusterDir, openCluster, startCluster, stopCluster } from '../scripts/cluster/index';
import { isAlive, ROLES } from '../scripts/cluster/roles';
import { generateReport } from './report/generate';
import { runRunVsPoller, RUN_VS_POLLER_FULL, RUN_VS_POLLER_QUICK } from './run-vs-poller';
import { runThroughput, THROUGHPUT_FULL, THROUGHPUT_QUICK } from './throughput';
import { runScheduling, SCHEDULING_FULL, SCHEDULING_QUICK } from './scheduling';
import { runSchedulingStack, SCHEDULING_STACK_FULL, SCHEDULING_STACK_QUICK } from './scheduling-stack';
import { GRAPH_FULL, GRAPH_QUICK, runGraph } from './graph';

/** The benches of a run without --only. */
const DEFAULT_BENCHES = ['handoff', 'throughput', 'footprint'] as const;
/** Every bench --only may name (batch, run-vs-poller, scheduling and graph run only when named). */
const BENCHES = [...DEFAULT_BENCHES, 'batch', 'run-vs-poller', 'scheduling', 'graph'] as const;
type BenchName = (typeof BENCHES)[number];

/** The value of `flag` as a positive whole number, or undefined when the flag is absent. */
function positiveIntFlag(argv: string[], flag: string): number | undefined {
  const at = argv.indexOf(flag);
  if (at < 0) return undefined;
  const text = argv[at + 1] ?? '';
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new Error(`${flag}: "${text}" is not a positive whole number`);
  return Number(text);
}

function parseArgs(argv: string[]) {
  const quick = argv.includes('--quick');
  const onlyAt = argv.indexOf('--only');
  const outAt = argv.indexOf('--out');
  const cacheAt = argv.indexOf('--worker-cache');
  const workerCaches = (cacheAt >= 0 ? (argv[cacheAt + 1] ?? '').split(',') : []).map((token) => {
    const [cache, heap] = token.split('/').map(Number);
    const valid = (n: number | undefined) => n !== undefined && Number.isInteger(n) && n > 0;
    if (!valid(cache) || (token.includes('/') && !valid(heap)))
      throw new Error(`--worker-cache: "${token}" is not <entries> or <entries>/<heap MiB> (positive integers)`);
    return { cache: cache!, ...(heap !== undefined ? { heapMiB: heap } : {}) };
  });
  const only = onlyAt >= 0 ? (argv[onlyAt + 1] ?? '').split(',') : [...DEFAULT_BENCHES];
  for (const name of only)
    if (!(BENCHES as readonly string[]).includes(name))
      throw new Error(`--only: unknown bench "${name}" (known: ${BENCHES.join(', ')})`);
  const items = positiveIntFlag(argv, '--items');
  const manifestRows = positiveIntFlag(argv, '--manifest-rows');
  const rounds = positiveIntFlag(argv, '--rounds');
  const runVsPoller = {
    ...(quick ? RUN_VS_POLLER_QUICK : RUN_VS_POLLER_FULL),
    ...(rounds !== undefined ? { rounds } : {}),
  };
  const batch: BatchSize = {
    ...(quick ? BATCH_QUICK : BATCH_FULL),
    ...(items !== undefined ? { items } : {}),
    ...(manifestRows !== undefined ? { manifestRows } : {}),
  };
  // A batch at another size than the full one is a check of the harness: reported beside its JSON, not in docs/.
  const reduced =
    !quick &&
    only.includes('batch') &&
    (batch.items !== BATCH_FULL.items || batch.manifestRows !== BATCH_FULL.manifestRows);
  const out = path.resolve(
    outAt >= 0 ? argv[outAt + 1]! : path.join(ROOT, '.bench', quick ? 'quick' : reduced ? 'small' : ''),
  );
  return {
    quick,
    reduced,
    batch,
    runVsPoller,
    only: only as BenchName[],
    out,
    // run-vs-poller, scheduling and graph are not in the report: a run of them alone leaves docs/ as they are.
    report:
      !argv.includes('--no-report') &&
      only.some((name) => name !== 'run-vs-poller' && name !== 'scheduling' && name !== 'graph'),
    build: !argv.includes('--no-build'),
    cluster: argv.includes('--cluster'),
    workerCaches,
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const log = (line: string) => console.log(`[${Math.round((Date.now() - started) / 1000)} s] ${line}`);
  setLogDir(path.join(args.out, 'logs'));
  const info = runInfo();
  log(
    `bench ${args.quick ? '(quick) ' : ''}on ${info.commit}${info.dirty ? ' (uncommitted changes)' : ''}: ${args.only.join(', ')} → ${args.out}`,
  );
  if (args.build) {
    log("building dist/ (tsc, emit only: the type check is CI's) and the workflow bundle, as `npm run build` does");
    buildForBench();
  }
  const meta = (load: ReturnType<ReturnType<typeof startLoadSampler>['stop']>, seconds: number) => ({
    ...info,
    quick: args.quick,
    seconds,
    load,
  });
  for (const name of args.only) {
    const t0 = Date.now();
    const sampler = startLoadSampler();
    log(`${name}…`);
    if (name === 'handoff') {
      const result = await runHandoff(args.quick ? HANDOFF_QUICK : HANDOFF_FULL, log);
      writeJson(args.out, 'handoff', { run: meta(sampler.stop(), Math.round((Date.now() - t0) / 1000)), ...result });
    } else if (name === 'throughput') {
      const result = await runThroughput(args.quick ? THROUGHPUT_QUICK : THROUGHPUT_FULL, log);
      writeJson(args.out, 'throughput', { run: meta(sampler.stop(), Math.round((Date.now() - t0) / 1000)), ...result });
    } else if (name === 'run-vs-poller') {
      const result = await runRunVsPoller(args.runVsPoller, log);
      writeJson(args.out, 'run-vs-poller', {
        run: meta(sampler.stop(), Math.round((Date.now() - t0) / 1000)),
        ...result,
      });
    } else if (name === 'scheduling') {
      const waiters = positiveIntFlag(process.argv, '--waiters');
      const size = {
        ...(args.quick ? SCHEDULING_QUICK : SCHEDULING_FULL),
        ...(waiters ? { waiters, grants: Math.min(SCHEDULING_FULL.grants, waiters) } : {}),
      };
      const providerItems = positiveIntFlag(process.argv, '--provider-items');
      const compareItems = positiveIntFlag(process.argv, '--compare-items');
      const stackSize = {
        ...(args.quick ? SCHEDULING_STACK_QUICK : SCHEDULING_STACK_FULL),
        ...(providerItems ? { providerItems } : {}),
        ...(compareItems ? { compareItems } : {}),
      };
      const result = { ...(await runScheduling(size, log)), stack: await runSchedulingStack(stackSize, log) };
      writeJson(args.out, 'scheduling', { run: meta(sampler.stop(), Math.round((Date.now() - t0) / 1000)), ...result });
    } else if (name === 'graph') {
      const rounds = positiveIntFlag(process.argv, '--rounds');
      const size = { ...(args.quick ? GRAPH_QUICK : GRAPH_FULL), ...(rounds ? { rounds } : {}) };
      const result = await runGraph(size, log);
      writeJson(args.out, 'graph', { run: meta(sampler.stop(), Math.round((Date.now() - t0) / 1000)), ...result });
    } else if (name === 'batch') {
      const result = await runBatch(args.batch, log);
      writeJson(args.out, 'batch', { run: meta(sampler.stop(), Math.round((Date.now() - t0) / 1000)), ...result });
    } else {
      const { footprint, bridge } = await runFootprintAndBridge(args.quick ? FOOTPRINT_QUICK : FOOTPRINT_FULL, log);
      const run = meta(sampler.stop(), Math.round((Date.now() - t0) / 1000));
      writeJson(args.out, 'footprint', { run, ...footprint });
      writeJson(args.out, 'bridge', { run, ...bridge });
    }
  }
  for (const { cache, heapMiB } of args.workerCaches) {
    const t0 = Date.now();
    const sampler = startLoadSampler();
    const label = `${cache}${heapMiB !== undefined ? `-heap-${heapMiB}` : ''}`;
    log(
      `footprint with the worker cache at ${cache}${heapMiB !== undefined ? ` and --max-old-space-size=${heapMiB}` : ''}…`,
    );
    const { footprint, bridge } = await runFootprintAndBridge(
      {
        ...(args.quick ? FOOTPRINT_QUICK : FOOTPRINT_FULL),
        workerCache: cache,
        ...(heapMiB !== undefined ? { workerHeapMiB: heapMiB } : {}),
      },
      log,
    );
    const run = meta(sampler.stop(), Math.round((Date.now() - t0) / 1000));
    writeJson(args.out, `footprint-cache-${label}`, { run, ...footprint });
    writeJson(args.out, `bridge-cache-${label}`, { run, ...bridge });
  }
  if (args.cluster) await runOnCluster(args, meta, log);
  if (args.report) {
    const written = await generateReport({ benchDir: args.out, quick: args.quick || args.reduced });
    for (const file of written) log(`written ${path.relative(ROOT, file)}`);
  }
  log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
}

/** Hand-off and throughput on the `npm run cluster` cluster (stub renders only: the real-render row is the dev server's). */
async function runOnCluster(
  args: ReturnType<typeof parseArgs>,
  meta: (load: ReturnType<ReturnType<typeof startLoadSampler>['stop']>, seconds: number) => Record<string, unknown>,
  log: (line: string) => void,
): Promise<void> {
  const dir = defaultClusterDir();
  const before = openCluster(dir);
  const wasRunning =
    before !== null &&
    ROLES.every((role) => {
      const pid = before.record.pids[role];
      return pid !== undefined && isAlive(pid);
    });
  log(
    `cluster: ${wasRunning ? 'using the running' : 'starting the'} Temporal cluster in ${path.relative(ROOT, dir)} (npm run cluster)`,
  );
  const cluster = await startCluster({ dir, log: (line) => log(`  cluster: ${line}`) });
  try {
    if (args.only.includes('handoff')) {
      const t0 = Date.now();
      const sampler = startLoadSampler();
      log('handoff on the cluster…');
      const result = await runHandoff(args.quick ? HANDOFF_QUICK : HANDOFF_FULL, log, cluster.address);
      writeJson(args.out, 'handoff-cluster', {
        run: { ...meta(sampler.stop(), Math.round((Date.now() - t0) / 1000)), temporal: `cluster ${cluster.address}` },
        ...result,
      });
    }
    if (args.only.includes('throughput')) {
      const t0 = Date.now();
      const sampler = startLoadSampler();
      log('throughput on the cluster…');
      const result = await runThroughput(
        { ...(args.quick ? THROUGHPUT_QUICK : THROUGHPUT_FULL), realWindowS: 0 },
        log,
        cluster.address,
      );
      writeJson(args.out, 'throughput-cluster', {
        run: { ...meta(sampler.stop(), Math.round((Date.now() - t0) / 1000)), temporal: `cluster ${cluster.address}` },
        ...result,
      });
    }
  } finally {
    if (!wasRunning) await stopCluster(dir, (line) => log(`  cluster: ${line}`));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    killAll();
    process.exit(1);
  },
);
