/**
 * The hand-off as users run it: `reelflow run <spec>` (bin/reelflow.js, in the foreground until the
 * pipeline ends) of a chain whose outputs are 30 s of 720p, once as the spec comes (the CLI fills in
 * `archive: on-expiry-risk`, so every output a later step reads, and the last one, is copied into the
 * media store) and once with `archive: never`, the runs of the two modes interleaved on one stack. A
 * hand-off is a job's `completedAt` → the next job's `receivedAt` on the service's clock. The archive
 * starts once the next step's submit was answered, so the two modes should hand off alike. The local
 * service keeps its journal in memory here (`serviceDataInMemory`): it stands for a service elsewhere,
 * and on one disk its fsyncs waited behind the media store's writes of whole videos (2026-11-27: the
 * p50s 5 ms apart in two runs with both on disk; 2 and 6 ms with the journal in /dev/shm, 0 over 24).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { from, pipeline, type PipelineSpec } from '../src/pipeline-spec';
import { pipelineWorkflowId } from '../src/workflows/definitions';
import { handoffsOf, hopBreakdowns, type HopBreakdown } from './lib/hops';
import { LONG_FORM, PIXEL_PNG, REVOICE } from './lib/shapes';
import { cliEnv, FIXTURES_DIR, ROOT, startBenchStack, type BenchStack } from './lib/stack';
import { round, summarize, type Summary } from './lib/stats';
import { silentWavDataUri } from '../test/helpers/inputs';

export interface ArchiveHandoffSize {
  /** `reelflow run`s of each mode (after one warm-up of each). */
  runs: number;
  /** Re-voicings after the long-form step: hand-offs per run. */
  revoices: number;
  /** How long each stub render takes, ms. */
  holdMs: number;
}

export const ARCHIVE_HANDOFF_FULL: ArchiveHandoffSize = { runs: 6, revoices: 4, holdMs: 2000 };
export const ARCHIVE_HANDOFF_QUICK: ArchiveHandoffSize = { runs: 1, revoices: 1, holdMs: 1000 };

type ArchiveMode = 'on-expiry-risk' | 'never';

/** The chain's outputs: what the long-form step asks for, and what the report says they are. */
const CLIP = { duration: '30', resolution: '720p', seconds: 30, width: 1280, height: 720 } as const;

export interface ArchiveHandoffResult {
  size: ArchiveHandoffSize;
  /** The outputs' frame size and length. */
  output: { width: number; height: number; seconds: number; bytes: number };
  /** Hand-offs per mode, ms (`on-expiry-risk`: the CLI's default, the spec names no mode). */
  handoffMs: Record<ArchiveMode, Summary>;
  samples: Record<ArchiveMode, number[]>;
  /**
   * Archived outputs the runs of each mode report (on-expiry-risk: every step's; each copy downloaded
   * and hashed, and stored once: the stub's outputs are one file, the store is content-addressed).
   */
  archivedCopies: Record<ArchiveMode, number>;
  /** p50 on-expiry-risk ÷ p50 never (asked: within 10 %). */
  ratio: number;
  /** The same hand-offs hop by hop, per mode (bench/lib/hops.ts); absent when the histories could not be read. */
  hops?: Record<ArchiveMode, HopBreakdown>;
}

/** A chain of 30 s 720p clips: a long-form generation, then `revoices` re-voicings each reading the one before. */
function chainSpec(name: string, origin: string, revoices: number, mode: ArchiveMode): PipelineSpec {
  const audio = silentWavDataUri();
  let builder = pipeline(name).step('generate', LONG_FORM, {
    image_urls: [PIXEL_PNG],
    duration: CLIP.duration,
    resolution: CLIP.resolution,
    aspect_ratio: '16:9',
  });
  let previous = 'generate';
  for (let i = 1; i <= revoices; i += 1) {
    builder = builder.step(`r${i}`, REVOICE, { video_url: from(previous), audio_url: audio });
    previous = `r${i}`;
  }
  const spec = builder.build({ allowedOrigins: [origin] });
  // The default mode is the CLI's: the spec says nothing, as a user's spec usually does.
  return mode === 'never' ? { ...spec, archive: 'never' } : spec;
}

/** Runs `reelflow run <spec>` to its end; resolves with the jobs the service created meanwhile. */
async function runOnce(stack: BenchStack, dir: string, spec: PipelineSpec) {
  const specFile = path.join(dir, `${spec.name}.json`);
  fs.writeFileSync(specFile, JSON.stringify(spec));
  const known = new Set((await stack.clocks()).jobs.map((j) => j.id));
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'reelflow.js'), 'run', specFile, '--json'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...cliEnv(stack, dir), REELFLOW_MEDIA_STORE: mediaStoreOf(dir) },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  if (code !== 0) throw new Error(`reelflow run ${spec.name} exited ${code}: ${(stderr + stdout).slice(-2000)}`);
  const summary = JSON.parse(stdout) as { steps: { archived?: unknown[] }[] };
  const after = await stack.clocks();
  return {
    jobs: after.jobs.filter((j) => !known.has(j.id)),
    all: new Map(after.jobs.map((j) => [j.id, j])),
    archivedCopies: summary.steps.reduce((n, step) => n + (step.archived?.length ?? 0), 0),
  };
}

const mediaStoreOf = (dir: string) => `file://${path.join(dir, 'media')}`;

/** Runs the measurement on its own stack (stub renders of `holdMs`, real 30 s 720p files). */
export async function runArchiveHandoff(
  size: ArchiveHandoffSize,
  log: (line: string) => void,
  temporalAddress?: string,
): Promise<ArchiveHandoffResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-archive-'));
  const stack = await startBenchStack({
    name: 'archive-handoff',
    render: 'stub',
    stubHoldMs: size.holdMs,
    bridge: true,
    worker: true,
    temporalAddress,
    serviceDataInMemory: true,
    workerEnv: { REELFLOW_MEDIA_STORE: mediaStoreOf(dir) },
  });
  try {
    const samples: Record<ArchiveMode, number[]> = { 'on-expiry-risk': [], never: [] };
    const workflowIds: Record<ArchiveMode, string[]> = { 'on-expiry-risk': [], never: [] };
    const archivedCopies: Record<ArchiveMode, number> = { 'on-expiry-risk': 0, never: 0 };
    // One unrecorded run of each mode (the 30 s 720p fixture rendered once, bundles loaded), then the
    // modes alternate so the machine's drift touches both alike.
    for (let run = 0; run <= size.runs; run += 1) {
      for (const mode of ['on-expiry-risk', 'never'] as const) {
        const name = `archive-${mode}-${run}-${randomUUID().slice(0, 6)}`;
        const done = await runOnce(stack, dir, chainSpec(name, stack.serviceUrl, size.revoices, mode));
        if (run === 0) continue;
        samples[mode].push(...handoffsOf(done.jobs, done.all));
        workflowIds[mode].push(pipelineWorkflowId(name));
        archivedCopies[mode] += done.archivedCopies;
      }
      if (run > 0) log(`  as users run it: run ${run} of ${size.runs} of each archive mode done`);
    }
    const { width, height, seconds } = CLIP;
    const fixture = path.join(FIXTURES_DIR, `stub-${width}x${height}-${seconds}s.mp4`);
    const handoffMs = { 'on-expiry-risk': summarize(samples['on-expiry-risk']), never: summarize(samples.never) };
    const hops = await hopBreakdowns(stack, workflowIds, log);
    return {
      size,
      output: { width, height, seconds, bytes: fs.existsSync(fixture) ? fs.statSync(fixture).size : 0 },
      handoffMs,
      samples,
      archivedCopies,
      ratio: round(handoffMs['on-expiry-risk'].p50 / handoffMs.never.p50, 3),
      ...(hops ? { hops } : {}),
    };
  } finally {
    await stack.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
