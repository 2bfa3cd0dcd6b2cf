/**
 * Graphs against their critical path, and a graph's orchestration cost against the same jobs as a chain.
 *
 *   npm run bench -- --only graph [--rounds 3]
 *
 * One local stack (stub renders held `stubHoldMs`, the service running every job at once: its queue is not
 * what is measured; the worker with a filesystem media store for the op steps):
 *  - the long ad without its gate (a person's wait is not the orchestration's): four scenes as one fan-out
 *    step → `concat` → re-voice → upscale. Its makespan on the service's own clocks (the first job's
 *    `receivedAt` → the last job's `completedAt`) ÷ its critical path (the longest path through the graph,
 *    each job counted from its `receivedAt` to its `completedAt` on the service's clock, each op from its
 *    row's `startedAt` to `finishedAt`). Target ≤ 1.1. The workflow's own span (start → close, history
 *    event times) is printed beside it.
 *  - orchestration CPU: `pipelines` four-branch graphs (four independent long-form jobs) and as many chains
 *    of the same four jobs (version 1), one kind after the other, each measured with the CPU of Temporal,
 *    the worker and the bridge per pipeline (bench/lib/cpu.ts), and the wall time per pipeline.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { parsePipelineSpec, type PipelineSpec } from '../src/pipeline-spec';
import { WORKFLOW_TYPES, pipelineWorkflowId } from '../src/workflows/definitions';
import type { PipelineSummary, PipelineWorkflowInput, StepSummary } from '../src/workflows/pipeline-types';
import { silentWavDataUri } from '../test/helpers/inputs';
import { cpuMeter, stackPids } from './lib/cpu';
import { historySpanMs } from './lib/history-times';
import { LONG_FORM, REVOICE, UPSCALE, longFormInput } from './lib/shapes';
import { startBenchStack, type BenchStack, type JobClocks } from './lib/stack';
import { percentile, round } from './lib/stats';

export interface GraphBenchSize {
  /** Long ads measured (after one unrecorded warm-up). */
  rounds: number;
  /** Graphs (and as many chains) for the CPU comparison. */
  pipelines: number;
  /** How long the service holds each stub render, ms. */
  stubHoldMs: number;
}

export const GRAPH_FULL: GraphBenchSize = { rounds: 3, pipelines: 20, stubHoldMs: 1_000 };
export const GRAPH_QUICK: GraphBenchSize = { rounds: 1, pipelines: 2, stubHoldMs: 200 };

/** One long ad: its spans and critical path, ms. */
export interface GraphRound {
  makespanMs: number;
  criticalPathMs: number;
  ratio: number;
  /** WorkflowExecutionStarted → the close event. */
  workflowSpanMs: number;
  /** Long-form jobs the service had in progress at once, at most. */
  scenesAtOnce: number;
}

export interface CpuSide {
  pipelines: number;
  /** CPU ms per pipeline of Temporal, the worker and the bridge, and their sum. */
  cpuMsPerPipeline: Record<string, number>;
  wallMsP50: number;
}

export interface GraphBenchResult {
  size: GraphBenchSize;
  rounds: GraphRound[];
  ratioP50: number;
  target: { ratioAtMost: number; met: boolean };
  cpu: { graph: CpuSide; chain: CpuSide; ratio: number };
}

const SCENES = 4;

/** The long ad of examples/long-ad.json as the bench runs it: no gate, stub-length scenes, inline audio. */
function longAdSpec(name: string, origin: string): PipelineSpec {
  return parsePipelineSpec(
    {
      name,
      version: 2,
      steps: [
        {
          id: 'scenes',
          model: LONG_FORM,
          each: Array.from({ length: SCENES }, (_, i) => ({ prompt: `scene ${i + 1}` })),
          input: { ...longFormInput(), prompt: { $item: 'prompt' } },
        },
        { id: 'cut', op: 'concat', input: { videos: { $from: 'scenes', path: '[*].videos[0].url' } } },
        { id: 'revoice', model: REVOICE, input: { video_url: { $from: 'cut' }, audio_url: silentWavDataUri() } },
        { id: 'upscale', model: UPSCALE, input: { video_url: { $from: 'revoice' } } },
      ],
    },
    { allowedOrigins: [origin] },
  );
}

/** Four long-form jobs: as a graph (independent, version 2) or as a chain (version 1, one after another). */
function fourJobsSpec(name: string, origin: string, kind: 'graph' | 'chain'): PipelineSpec {
  return parsePipelineSpec(
    {
      name,
      ...(kind === 'graph' ? { version: 2 } : {}),
      steps: Array.from({ length: 4 }, (_, i) => ({ id: `s${i}`, model: LONG_FORM, input: longFormInput() })),
    },
    { allowedOrigins: [origin] },
  );
}

/** The step and item a job belongs to, from its Idempotency-Key (`reelflow:<pipeline>/job/<step>[/<i>]:<run>:<n>`). */
function nodeOfKey(key: string | null, pipeline: string): string | undefined {
  const match = key ? /^reelflow:(.+)\/job\/([^/:]+)(?:\/\d+)?:[^:]+:\d+$/.exec(key) : null;
  return match && match[1] === pipeline ? match[2] : undefined;
}

/** The longest path through the graph, each node weighted by `durationOf`. */
export function criticalPathMs(steps: StepSummary[], durationOf: (step: StepSummary) => number): number {
  const finish = new Map<string, number>();
  const longest = (step: StepSummary): number => {
    const known = finish.get(step.id);
    if (known !== undefined) return known;
    const before = (step.dependsOn ?? []).map((id) => {
      const dep = steps.find((s) => s.id === id);
      return dep ? longest(dep) : 0;
    });
    const value = Math.max(0, ...before) + durationOf(step);
    finish.set(step.id, value);
    return value;
  };
  return Math.max(...steps.map(longest));
}

/** Most jobs of `model` in progress at once (received → completed) on the service's clock. */
function mostAtOnce(jobs: JobClocks[], model: string): number {
  const edges = jobs
    .filter((j) => j.model === model && j.completedAt !== null)
    .flatMap((j) => [
      { at: j.receivedAt, d: 1 },
      { at: j.completedAt!, d: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (now += edge.d));
  return most;
}

async function runPipeline(client: Client, stack: BenchStack, spec: PipelineSpec): Promise<PipelineSummary> {
  const input: PipelineWorkflowInput = { spec, uriRules: { allowedOrigins: [stack.serviceUrl] } };
  const handle = await client.workflow.start(WORKFLOW_TYPES.pipeline, {
    taskQueue: stack.taskQueue,
    workflowId: pipelineWorkflowId(spec.name),
    args: [input],
  });
  return (await handle.result()) as PipelineSummary;
}

/** One long ad: makespan and critical path on the service's clocks, the workflow's span from its history. */
async function longAdRound(client: Client, stack: BenchStack, name: string): Promise<GraphRound> {
  const summary = await runPipeline(client, stack, longAdSpec(name, stack.serviceUrl));
  const { jobs } = await stack.clocks();
  const mine = jobs.filter((j) => nodeOfKey(j.idempotencyKey, name) !== undefined && j.completedAt !== null);
  const jobMs = (step: StepSummary) =>
    Math.max(
      0,
      ...mine.filter((j) => nodeOfKey(j.idempotencyKey, name) === step.id).map((j) => j.completedAt! - j.receivedAt),
    );
  const opMs = (step: StepSummary) => (step.finishedAt ?? 0) - (step.startedAt ?? step.finishedAt ?? 0);
  const critical = criticalPathMs(summary.steps, (step) => ('model' in step && step.model ? jobMs(step) : opMs(step)));
  const makespan = Math.max(...mine.map((j) => j.completedAt!)) - Math.min(...mine.map((j) => j.receivedAt));
  return {
    makespanMs: makespan,
    criticalPathMs: critical,
    ratio: round(makespan / Math.max(1, critical), 3),
    workflowSpanMs: await historySpanMs(client, pipelineWorkflowId(name)),
    scenesAtOnce: mostAtOnce(mine, LONG_FORM),
  };
}

/** `count` pipelines of the four jobs as `kind`, all at once; CPU per pipeline and wall time. */
async function cpuSide(client: Client, stack: BenchStack, kind: 'graph' | 'chain', count: number): Promise<CpuSide> {
  const cpu = cpuMeter(stackPids(stack), 1);
  const walls = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const t0 = Date.now();
      await runPipeline(
        client,
        stack,
        fourJobsSpec(`bench-${kind}-${i}-${randomUUID().slice(0, 6)}`, stack.serviceUrl, kind),
      );
      return Date.now() - t0;
    }),
  );
  const perPipeline = cpu(count);
  const { temporal = 0, worker = 0, bridge = 0 } = perPipeline;
  return {
    pipelines: count,
    cpuMsPerPipeline: { temporal, worker, bridge, total: round(temporal + worker + bridge, 1) },
    wallMsP50: percentile(
      walls.sort((a, b) => a - b),
      50,
    ),
  };
}

/** Runs the graph bench; `log` gets one line per figure. */
export async function runGraph(size: GraphBenchSize, log: (line: string) => void): Promise<GraphBenchResult> {
  const media = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-graph-media-'));
  const stack = await startBenchStack({
    name: 'graph',
    render: 'stub',
    stubHoldMs: size.stubHoldMs,
    bridge: true,
    worker: true,
    workerEnv: { REELFLOW_MEDIA_STORE: `file://${media}` },
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const client = new Client({ connection });
    await longAdRound(client, stack, `bench-long-ad-warm-${randomUUID().slice(0, 6)}`);
    const rounds: GraphRound[] = [];
    for (let i = 0; i < size.rounds; i += 1) {
      const row = await longAdRound(client, stack, `bench-long-ad-${i}-${randomUUID().slice(0, 6)}`);
      rounds.push(row);
      log(
        `  long ad ${i + 1}: makespan ${row.makespanMs} ms ÷ critical path ${row.criticalPathMs} ms = ${row.ratio} (workflow ${row.workflowSpanMs} ms; ${row.scenesAtOnce} scenes at once)`,
      );
    }
    const ratios = rounds.map((r) => r.ratio).sort((a, b) => a - b);
    const ratioP50 = percentile(ratios, 50);
    log(`  long ad p50 ratio ${ratioP50} (target ≤ 1.1: ${ratioP50 <= 1.1 ? 'met' : 'NOT met'})`);
    const graph = await cpuSide(client, stack, 'graph', size.pipelines);
    const chain = await cpuSide(client, stack, 'chain', size.pipelines);
    const ratio = round(graph.cpuMsPerPipeline.total! / Math.max(0.1, chain.cpuMsPerPipeline.total!), 2);
    for (const [label, side] of [
      ['graph', graph],
      ['chain', chain],
    ] as const)
      log(
        `  four jobs as a ${label}: ${side.cpuMsPerPipeline.total} CPU ms per pipeline (temporal ${side.cpuMsPerPipeline.temporal}, worker ${side.cpuMsPerPipeline.worker}, bridge ${side.cpuMsPerPipeline.bridge}); wall p50 ${side.wallMsP50} ms`,
      );
    log(`  orchestration CPU graph ÷ chain: ${ratio}`);
    return { size, rounds, ratioP50, target: { ratioAtMost: 1.1, met: ratioP50 <= 1.1 }, cpu: { graph, chain, ratio } };
  } finally {
    await connection.close();
    await stack.stop();
    fs.rmSync(media, { recursive: true, force: true });
  }
}
