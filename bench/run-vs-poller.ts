/**
 * `reelflow run` against the naive poller, as a user runs each: a chain of a long-form generation and
 * six re-voicings (bench/lib/shapes.ts, the naive client's own jobs) on one local stack whose service
 * renders with ffmpeg, once through `reelflow run <spec>` (bin/reelflow.js, the real CLI process, in
 * the foreground to its end) and once through the naive client (bench/procs/naive-client.ts: poll every
 * NAIVE_POLL_MS), the two alternating round after round (which goes first alternates too).
 *
 * Wall times: reelflow's from its spawn to its exit (everything the user waits for), against the compiled
 * poller's process, spawn to exit (the target); and the poller's own span, from
 * its first submit to its last result read, on its own clock (a client that is already running: the
 * strictest comparison for reelflow, whose wall time includes a process start). Hand-offs on the
 * service's clock (a job's `completedAt` → the next job's `receivedAt`). reelflow's fixed cost, split:
 *  - before the first submit: spawn → `WorkflowExecutionStarted` (the CLI process: Node's start, module
 *    loading, the spec, the connection, the start request) → the first job's `receivedAt` (the worker:
 *    the first workflow task, the preflight, the submit); module loading alone is `reelflow run --help`
 *    (process start, the run command's modules, no connection), measured beside;
 *  - after the last completion: the last job's `completedAt` → the signal carrying its event (webhook
 *    and bridge) → the close event (the final archive copy the spec asks for, the ledger) → the CLI
 *    process's exit (noticing the close, the final view, disconnecting, exiting).
 * The target: reelflow's wall time ≤ the poller's minus 80 % of the hand-offs' difference (p50 per
 * hand-off × hand-offs per chain), on the medians over the rounds, command against command (the poller
 * compiled by esbuild, run on node alone, as reelflow's CLI is); the stricter reading, against the
 * poller's own span, is printed beside it.
 *
 *   npm run bench -- --only run-vs-poller [--rounds 5]
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { pipelineWorkflowId } from '../src/workflows/definitions';
import { bundleNaiveClient, driveNaive } from './lib/drive';
import { eventMs } from './lib/history-times';
import { handoffsOf } from './lib/hops';
import { sampleProcess } from './lib/processes';
import { specFor } from './lib/shapes';
import { BENCH_API_KEY, cliEnv, DIST, ROOT, startBenchStack, type BenchStack, type JobClocks } from './lib/stack';
import { percentile, round, summarize, type Summary } from './lib/stats';
import { NAIVE_POLL_MS } from './handoff';

export interface RunVsPollerSize {
  /** Measured rounds (one `reelflow run` and one poller chain each), after one unrecorded warm-up round. */
  rounds: number;
  /** Re-voicings after the long-form step: hand-offs per chain. */
  revoices: number;
  /** `reelflow run --help` spawns (process start and module loading) measured after the rounds. */
  helpRuns: number;
}

export const RUN_VS_POLLER_FULL: RunVsPollerSize = { rounds: 5, revoices: 6, helpRuns: 5 };
export const RUN_VS_POLLER_QUICK: RunVsPollerSize = { rounds: 1, revoices: 6, helpRuns: 1 };

/** Where one `reelflow run`'s fixed cost went, ms (NaN where the history lacked the event). */
export interface FixedCost {
  /** spawn → the first job's `receivedAt`. */
  beforeFirstSubmit: number;
  /** spawn → `WorkflowExecutionStarted`: the CLI process until its start request was recorded. */
  cliToStart: number;
  /** `WorkflowExecutionStarted` → the first job's `receivedAt`: the worker's first task, preflight, submit. */
  startToSubmit: number;
  /** The last job's `completedAt` → the CLI's exit. */
  afterLastCompletion: number;
  /** The last job's `completedAt` → the signal that carried its outcome. */
  completionToSignal: number;
  /** That signal → the close event (the final archive copy, the ledger, the close). */
  signalToClose: number;
  /** Of which the final archive activity, scheduled → completed (0 when there is none). */
  finalArchive: number;
  /** The close event → the CLI's exit. */
  closeToExit: number;
  /**
   * CPU time (user + system) of the CLI process until `WorkflowExecutionStarted`, and in all, sampled
   * every SAMPLE_MS: its own work, which a busy machine stretches in wall time but not in CPU.
   */
  cliCpuToStart: number;
  cliCpu: number;
}

export interface RunVsPollerRound {
  order: 'reelflow first' | 'poller first';
  reelflowWallMs: number;
  pollerWallMs: number;
  /** The poller's process, spawn → exit, compiled (bundleNaiveClient): what its user waits for. */
  pollerProcessMs: number;
  reelflowHandoffs: number[];
  pollerHandoffs: number[];
  fixed: FixedCost;
  /** The poller's own: its start → the first `receivedAt`, and the last `completedAt` → its last result read. */
  pollerFixed: { beforeFirstSubmit: number; afterLastCompletion: number };
}

export interface RunVsPollerResult {
  size: RunVsPollerSize;
  naivePollMs: number;
  rounds: RunVsPollerRound[];
  wallMs: { reelflow: Summary; poller: Summary };
  handoffMs: { reelflow: Summary; poller: Summary };
  /** The poller's p50 hand-off − reelflow's, ms. */
  perHandoffDifferenceMs: number;
  /** reelflow's fixed costs, p50 over the rounds, ms. */
  fixedMs: Record<keyof FixedCost, number>;
  /** `reelflow run --help`: process start and the run command's module loading, ms. */
  moduleLoadMs: Summary;
  /**
   * The issue's target, command against command: reelflow run's wall time (spawn → exit) ≤ the
   * compiled poller's (spawn → exit) − 80 % of the hand-offs' difference.
   */
  target: { handoffs: number; maxReelflowWallMs: number; reelflowWallMs: number; met: boolean };
  /** The stricter reading: against the poller's own span, its first submit → its last result read (no process start). */
  strictTarget: { maxReelflowWallMs: number; met: boolean };
  /** Whether bin/reelflow.js ran the compiled CLI to the end (false: a source file changed meanwhile). */
  compiledCli: boolean;
}

const RUN_TIMEOUT_MS = 180_000;
/** How often the CLI process's CPU time is read. */
const SAMPLE_MS = 10;

/** Spawns `node bin/reelflow.js <args>` in `dir`; resolves with its spawn and exit times and output. */
async function spawnCli(stack: BenchStack, dir: string, args: string[]) {
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'reelflow.js'), ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...cliEnv(stack, dir), REELFLOW_MEDIA_STORE: mediaStoreOf(dir) },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const cpu: { at: number; ms: number }[] = [];
  const sampler = setInterval(() => {
    try {
      cpu.push({ at: Date.now(), ms: sampleProcess(child.pid!).cpuSeconds * 1000 });
    } catch {
      // Gone between the tick and the read.
    }
  }, SAMPLE_MS);
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  const exitedAt = Date.now();
  clearTimeout(timer);
  clearInterval(sampler);
  if (code !== 0) throw new Error(`reelflow ${args.join(' ')} exited ${code}: ${output.slice(-2000)}`);
  /** The CLI's CPU ms at `at` (its last reading before then). */
  const cpuAt = (at: number) => cpu.filter((c) => c.at <= at).at(-1)?.ms ?? NaN;
  return { spawnedAt, exitedAt, output, cpuAt };
}

const mediaStoreOf = (dir: string) => `file://${path.join(dir, 'media')}`;

/** Jobs the service created since `known`, and every job by id. */
async function newJobs(stack: BenchStack, known: Set<string>) {
  const { jobs } = await stack.clocks();
  return { fresh: jobs.filter((j) => !known.has(j.id)), all: new Map(jobs.map((j) => [j.id, j])) };
}

/** The request id a signal's first payload (a webhook event, JSON) names. */
function signalledRequestId(data: Uint8Array | null | undefined): string | undefined {
  if (!data) return undefined;
  try {
    return (JSON.parse(Buffer.from(data).toString('utf8')) as { request_id?: string }).request_id;
  } catch {
    return undefined;
  }
}

/** The pipeline's history times the split needs: started, the signal of `lastJob`, the final archive, the close. */
async function historyTimes(client: Client, workflowId: string, lastJob: string) {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const started = eventMs(events[0]?.eventTime);
  const closed = eventMs(events.at(-1)?.eventTime);
  let signalled = NaN;
  for (const event of events) {
    const attributes = event.workflowExecutionSignaledEventAttributes;
    if (attributes && signalledRequestId(attributes.input?.payloads?.[0]?.data) === lastJob) {
      signalled = eventMs(event.eventTime);
      break;
    }
  }
  // The last archive activity: its scheduled event, then its completion (which names it).
  let archive = 0;
  const scheduled = new Map<string, number>();
  for (const event of events) {
    const a = event.activityTaskScheduledEventAttributes;
    if (a && /archiveOutputs$/.test(a.activityType?.name ?? ''))
      scheduled.set(String(event.eventId), eventMs(event.eventTime));
    const done = event.activityTaskCompletedEventAttributes;
    const from = done ? scheduled.get(String(done.scheduledEventId)) : undefined;
    if (from !== undefined) archive = eventMs(event.eventTime) - from;
  }
  return { started, signalled, archive, closed };
}

/** One `reelflow run` of the chain: wall time, hand-offs and the fixed-cost split. */
async function reelflowOnce(stack: BenchStack, client: Client, dir: string, revoices: number) {
  const name = `rvp-${randomUUID().slice(0, 8)}`;
  const specFile = path.join(dir, `${name}.json`);
  fs.writeFileSync(specFile, JSON.stringify(specFor({ type: 'chain', revoices }, name, stack.serviceUrl)));
  const known = new Set((await stack.clocks()).jobs.map((j) => j.id));
  const { spawnedAt, exitedAt, cpuAt } = await spawnCli(stack, dir, ['run', specFile]);
  const { fresh, all } = await newJobs(stack, known);
  const firstSubmit = Math.min(...fresh.map((j) => j.receivedAt));
  const last = lastCompleted(fresh);
  const times = await historyTimes(client, pipelineWorkflowId(name), last.id);
  const fixed: FixedCost = {
    beforeFirstSubmit: firstSubmit - spawnedAt,
    cliToStart: times.started - spawnedAt,
    startToSubmit: firstSubmit - times.started,
    afterLastCompletion: exitedAt - last.completedAt,
    completionToSignal: times.signalled - last.completedAt,
    signalToClose: times.closed - times.signalled,
    finalArchive: times.archive,
    closeToExit: exitedAt - times.closed,
    cliCpuToStart: cpuAt(times.started),
    cliCpu: cpuAt(exitedAt),
  };
  return { wallMs: exitedAt - spawnedAt, handoffs: handoffsOf(fresh, all), fixed, jobs: fresh.length };
}

function lastCompleted(jobs: JobClocks[]): JobClocks & { completedAt: number } {
  const done = jobs.filter((j): j is JobClocks & { completedAt: number } => j.completedAt !== null);
  if (done.length === 0) throw new Error('no completed job');
  return done.reduce((a, b) => (b.completedAt > a.completedAt ? b : a));
}

/** One naive-poller chain: its wall time on its own clock, its process's, hand-offs, its fixed cost. */
async function pollerOnce(stack: BenchStack, revoices: number, bundle: string) {
  const known = new Set((await stack.clocks()).jobs.map((j) => j.id));
  const spawnedAt = Date.now();
  const result = await driveNaive(
    `rvp-naive-${randomUUID().slice(0, 6)}`,
    {
      serviceUrl: stack.serviceUrl,
      apiKey: BENCH_API_KEY,
      chains: 1,
      revoices,
      pollMs: NAIVE_POLL_MS,
    },
    bundle,
  );
  const exitedAt = Date.now();
  const { fresh, all } = await newJobs(stack, known);
  return {
    wallMs: result.endedAt - result.startedAt,
    processMs: exitedAt - spawnedAt,
    handoffs: handoffsOf(fresh, all),
    fixed: {
      beforeFirstSubmit: Math.min(...fresh.map((j) => j.receivedAt)) - result.startedAt,
      afterLastCompletion: result.endedAt - lastCompleted(fresh).completedAt,
    },
  };
}

/** Newest modification time of the files under `dir`, ms. */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(file) : fs.statSync(file).mtimeMs);
  }
  return newest;
}

/**
 * Whether bin/reelflow.js runs the compiled CLI (as it decides: dist/ newer than every file of src/);
 * a source file changed during the bench makes it run the TypeScript through tsx, about twice the CPU.
 */
const compiledCliIsFresh = () =>
  fs.statSync(path.join(DIST, 'cli', 'main.js')).mtimeMs >= newestUnder(path.join(ROOT, 'src'));

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** Runs the rounds on one stack (ffmpeg renders, bridge, worker) and sums them up. */
export async function runRunVsPoller(size: RunVsPollerSize, log: (line: string) => void): Promise<RunVsPollerResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-rvp-'));
  const naiveBundle = bundleNaiveClient(dir);
  const stack = await startBenchStack({
    name: 'run-vs-poller',
    render: 'ffmpeg',
    bridge: true,
    worker: true,
    workerEnv: { REELFLOW_MEDIA_STORE: mediaStoreOf(dir) },
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const client = new Client({ connection });
    const rounds: RunVsPollerRound[] = [];
    for (let round = 0; round <= size.rounds; round += 1) {
      const reelflowFirst = round % 2 === 0;
      const r1 = reelflowFirst ? await reelflowOnce(stack, client, dir, size.revoices) : undefined;
      const p = await pollerOnce(stack, size.revoices, naiveBundle);
      const r = r1 ?? (await reelflowOnce(stack, client, dir, size.revoices));
      // Round 0 warms up: the CLI's first compile or cache, ffmpeg's first renders, the worker's bundle.
      if (round === 0) continue;
      rounds.push({
        order: reelflowFirst ? 'reelflow first' : 'poller first',
        reelflowWallMs: r.wallMs,
        pollerWallMs: p.wallMs,
        pollerProcessMs: p.processMs,
        reelflowHandoffs: r.handoffs,
        pollerHandoffs: p.handoffs,
        fixed: r.fixed,
        pollerFixed: p.fixed,
      });
      log(describeRound(rounds.length, size.rounds, rounds.at(-1)!));
    }
    const help: number[] = [];
    for (let i = 0; i < size.helpRuns; i += 1) {
      const { spawnedAt, exitedAt } = await spawnCli(stack, dir, ['run', '--help']);
      help.push(exitedAt - spawnedAt);
    }
    const result = { ...sumUp(size, rounds, help), compiledCli: compiledCliIsFresh() };
    for (const line of describeResult(result)) log(line);
    if (!result.compiledCli)
      log(
        '  warning: a file under src/ is newer than dist/: bin/reelflow.js ran the TypeScript through tsx, not the compiled CLI',
      );
    return result;
  } finally {
    await connection.close();
    await stack.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function sumUp(
  size: RunVsPollerSize,
  rounds: RunVsPollerRound[],
  help: number[],
): Omit<RunVsPollerResult, 'compiledCli'> {
  const handoffMs = {
    reelflow: summarize(rounds.flatMap((r) => r.reelflowHandoffs)),
    poller: summarize(rounds.flatMap((r) => r.pollerHandoffs)),
  };
  const wallMs = {
    reelflow: summarize(rounds.map((r) => r.reelflowWallMs)),
    poller: summarize(rounds.map((r) => r.pollerWallMs)),
  };
  const perHandoffDifferenceMs = round(handoffMs.poller.p50 - handoffMs.reelflow.p50);
  const keys = Object.keys(rounds[0]?.fixed ?? {}) as (keyof FixedCost)[];
  const fixedMs = Object.fromEntries(keys.map((k) => [k, round(median(rounds.map((r) => r.fixed[k])))])) as Record<
    keyof FixedCost,
    number
  >;
  const pollerProcessMs = summarize(rounds.map((r) => r.pollerProcessMs));
  const gain = 0.8 * size.revoices * perHandoffDifferenceMs;
  const maxReelflowWallMs = round(pollerProcessMs.p50 - gain);
  const strictMax = round(wallMs.poller.p50 - gain);
  return {
    size,
    naivePollMs: NAIVE_POLL_MS,
    rounds,
    wallMs,
    handoffMs,
    perHandoffDifferenceMs,
    fixedMs,
    moduleLoadMs: summarize(help),
    target: {
      handoffs: size.revoices,
      maxReelflowWallMs,
      reelflowWallMs: wallMs.reelflow.p50,
      met: wallMs.reelflow.p50 <= maxReelflowWallMs,
    },
    strictTarget: { maxReelflowWallMs: strictMax, met: wallMs.reelflow.p50 <= strictMax },
  };
}

function describeRound(n: number, of: number, r: RunVsPollerRound): string {
  const f = r.fixed;
  return (
    `  round ${n} of ${of} (${r.order}): reelflow ${r.reelflowWallMs} ms, poller ${r.pollerWallMs} ms ` +
    `(process ${r.pollerProcessMs} ms); hand-off p50 ${median(r.reelflowHandoffs)} vs ${median(r.pollerHandoffs)} ms; ` +
    `reelflow before first submit ${f.beforeFirstSubmit} (cli ${f.cliToStart} + worker ${f.startToSubmit}), ` +
    `after last completion ${f.afterLastCompletion} (signal ${f.completionToSignal} + close ${f.signalToClose} ` +
    `[archive ${f.finalArchive}] + exit ${f.closeToExit}) ms; CLI CPU ${f.cliCpuToStart} to the start, ${f.cliCpu} in all`
  );
}

/** The result in lines for the log: everything the comparison and the fixed-cost split need. */
export function describeResult(r: RunVsPollerResult): string[] {
  const f = r.fixedMs;
  return [
    `run-vs-poller: ${r.rounds.length} rounds of a long-form job and ${r.size.revoices} re-voicings (ffmpeg renders)`,
    `  wall p50: reelflow run ${r.wallMs.reelflow.p50} ms, naive ${r.naivePollMs} ms poller ${r.wallMs.poller.p50} ms`,
    `  hand-off p50: reelflow ${r.handoffMs.reelflow.p50} ms, poller ${r.handoffMs.poller.p50} ms: ${r.perHandoffDifferenceMs} ms per hand-off`,
    `  reelflow's fixed cost (p50): before the first submit ${f.beforeFirstSubmit} ms = CLI to workflow start ${f.cliToStart} ` +
      `(of which process start and module loading, run --help, ${r.moduleLoadMs.p50}) + start to submit ${f.startToSubmit}`,
    `  after the last completion ${f.afterLastCompletion} ms = completion to signal ${f.completionToSignal} + signal to close ` +
      `${f.signalToClose} (final archive ${f.finalArchive}) + close to exit ${f.closeToExit}`,
    `  the CLI process's CPU (p50): ${f.cliCpuToStart} ms until the workflow started, ${f.cliCpu} ms in all`,
    `  target, command against command: reelflow run ≤ the compiled poller's process (p50) − 80 % × ${r.target.handoffs} × ` +
      `${r.perHandoffDifferenceMs} = ${r.target.maxReelflowWallMs} ms: ${r.target.reelflowWallMs} ms, ${r.target.met ? 'met' : 'NOT met'}`,
    `  stricter, against the poller's own first submit → last read: ≤ ${r.strictTarget.maxReelflowWallMs} ms: ` +
      `${r.strictTarget.met ? 'met' : 'NOT met'}`,
  ];
}
