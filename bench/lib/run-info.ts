import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { serviceIdempotencySchema, type ServiceIdempotency } from '../../src/config/schemas';

/** Where and on what a bench ran: named on every table and chart. */
export interface RunInfo {
  commit: string;
  /** Subject line of the commit. */
  subject: string;
  /** True when the work tree had changes not in the commit. */
  dirty: boolean;
  date: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string; temporalCli: string };
  /** The reelflow worker's REELFLOW_SERVICE_IDEMPOTENCY (absent in runs before it was recorded: `unknown`). */
  serviceIdempotency?: ServiceIdempotency;
}

/**
 * What the benches tell the reelflow worker about the service: `honoured` (submits run as local
 * activities), as `reelflow dev` runs the local service, which honours Idempotency-Key; set
 * REELFLOW_SERVICE_IDEMPOTENCY=unknown to measure the activity submits of a service not known to.
 */
export function benchServiceIdempotency(): ServiceIdempotency {
  // The variable's own schema: a misspelt value fails here instead of being read as `honoured`.
  return serviceIdempotencySchema.parse(process.env.REELFLOW_SERVICE_IDEMPOTENCY ?? 'honoured');
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

/** The commit, machine and date of this run. */
export function runInfo(): RunInfo {
  return {
    commit: git(['rev-parse', '--short=10', 'HEAD']),
    subject: git(['log', '-1', '--format=%s']),
    dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '',
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      platform: `${os.type()} ${os.release()}`,
      temporalCli: 'Temporal CLI dev server (in-memory)',
    },
    serviceIdempotency: benchServiceIdempotency(),
  };
}

/** Machine load while a bench ran: load averages and the other processes' CPU share, sampled. */
export interface LoadSample {
  at: number;
  loadavg1: number;
  /** Share of all CPUs busy over the last interval (0–1), from /proc/stat. */
  busy: number;
}

/** Samples /proc/stat and the load average every `intervalMs` until stopped. */
export function startLoadSampler(intervalMs = 2_000): {
  stop(): {
    loadavg1: { min: number; max: number; mean: number };
    busy: { mean: number; max: number };
    samples: number;
  };
} {
  const read = () => {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = (line[3] ?? 0) + (line[4] ?? 0);
    const total = line.reduce((a, b) => a + b, 0);
    return { idle, total };
  };
  const samples: LoadSample[] = [];
  let last = read();
  const timer = setInterval(() => {
    const now = read();
    const busy = now.total > last.total ? 1 - (now.idle - last.idle) / (now.total - last.total) : 0;
    last = now;
    samples.push({ at: Date.now(), loadavg1: os.loadavg()[0] ?? 0, busy });
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      const loads = samples.map((s) => s.loadavg1);
      const busy = samples.map((s) => s.busy);
      const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
      const r = (v: number) => Math.round(v * 100) / 100;
      return {
        loadavg1: { min: r(Math.min(...loads)), max: r(Math.max(...loads)), mean: r(mean(loads)) },
        busy: { mean: r(mean(busy)), max: r(Math.max(...busy)) },
        samples: samples.length,
      };
    },
  };
}

/** Writes `data` as `<dir>/<name>.json` and says so. */
export function writeJson(dir: string, name: string, data: unknown): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  console.log(`written ${file}`);
  return file;
}
