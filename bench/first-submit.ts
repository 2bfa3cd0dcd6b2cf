/**
 * `reelflow run` from the command to the first submit the service receives: the user's wait before any
 * paid work starts. Spawns the CLI the way a user does (`bin/reelflow.js`, which runs the TypeScript
 * through tsx) and the compiled entry point (`node dist/cli/main.js`), `run <spec> --detach` on a
 * one-step pipeline, and reads the service's `receivedAt` of the job it submitted. Both clocks are the
 * same machine's wall clock; the spawn instant is taken just before `spawn`.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { specFor } from './lib/shapes';
import { cliEnv, DIST, ROOT, type BenchStack } from './lib/stack';
import { summarize, type Summary } from './lib/stats';

export interface FirstSubmitResult {
  runs: number;
  /** Command spawned → first submit received by the service, ms. */
  userCommandMs: Summary;
  compiledMs: Summary;
  samples: { userCommand: number[]; compiled: number[] };
}

const ENTRY = {
  userCommand: [path.join(ROOT, 'bin', 'reelflow.js')],
  compiled: [path.join(DIST, 'cli', 'main.js')],
} as const;

async function once(stack: BenchStack, entry: readonly string[], dir: string): Promise<number> {
  const name = `first-${randomUUID().slice(0, 8)}`;
  const specFile = path.join(dir, `${name}.json`);
  fs.writeFileSync(specFile, JSON.stringify(specFor({ type: 'one-step' }, name, stack.serviceUrl)));
  const env = cliEnv(stack, dir);
  const known = new Set((await stack.clocks()).jobs.map((j) => j.id));
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, [...entry, 'run', specFile, '--detach'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: dir,
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  const deadline = spawnedAt + 60_000;
  for (;;) {
    const fresh = (await stack.clocks()).jobs.filter((j) => !known.has(j.id));
    if (fresh.length) {
      const first = Math.min(...fresh.map((j) => j.receivedAt));
      const code = await exited;
      if (code !== 0) throw new Error(`reelflow run exited ${code}: ${stderr.slice(0, 2000)}`);
      return first - spawnedAt;
    }
    if (Date.now() > deadline) throw new Error(`no submit 60 s after \`reelflow run\`: ${stderr.slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs `runs` measurements of each entry point (after one unrecorded warm-up of each). */
export async function measureFirstSubmit(stack: BenchStack, runs: number): Promise<FirstSubmitResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-first-'));
  try {
    const samples = { userCommand: [] as number[], compiled: [] as number[] };
    for (const kind of ['userCommand', 'compiled'] as const) {
      await once(stack, ENTRY[kind], dir);
      for (let i = 0; i < runs; i += 1) samples[kind].push(await once(stack, ENTRY[kind], dir));
    }
    return { runs, userCommandMs: summarize(samples.userCommand), compiledMs: summarize(samples.compiled), samples };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
