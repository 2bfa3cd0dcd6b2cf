/**
 * CPU time of the stack's own processes over a stretch of a bench, so a figure can say which process
 * spent the time (Temporal, worker, bridge, service) instead of only how long it took. CPU seconds come
 * from /proc (user + system), so other work on the machine does not count.
 */
import * as fs from 'node:fs';
import { sampleProcess } from './processes';
import { round } from './stats';
import type { BenchStack } from './stack';

/** Process label → pid, for the parts of `stack` that run (Temporal only when it is the stack's dev server). */
export function stackPids(stack: BenchStack): Record<string, number> {
  const pids: Record<string, number> = {};
  const port = stack.temporal ? stack.temporalAddress.split(':').pop() : undefined;
  if (port) {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        if (cmdline.includes('start-dev') && cmdline[cmdline.indexOf('--port') + 1] === port)
          pids.temporal = Number(entry);
      } catch {
        // Gone meanwhile.
      }
    }
  }
  for (const [name, proc] of Object.entries(stack.processes)) pids[name] = proc.pid;
  return pids;
}

/**
 * Starts a measurement; the returned function gives CPU ms per `units` for each process since then
 * (to `decimals` places: a per-delivery cost of a fraction of a millisecond would round to 0).
 */
export function cpuMeter(pids: Record<string, number>, decimals = 0): (units: number) => Record<string, number> {
  const read = () =>
    Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, sampleProcess(pid).cpuSeconds]));
  const start = read();
  return (units) => {
    const end = read();
    const perUnit = Object.fromEntries(
      Object.keys(pids).map((name) => [
        name,
        round(((end[name]! - start[name]!) * 1000) / (units > 0 ? units : 1), decimals),
      ]),
    );
    return {
      ...perUnit,
      total: round(
        Object.values(perUnit).reduce((a, b) => a + b, 0),
        decimals,
      ),
    };
  };
}

/** The lean-orchestration target's CPU comparison of one reelflow level against one raw level (CPU ms per run, from `cpuMeter`). */
export interface OrchestrationCpu {
  /** Temporal + worker + bridge per reelflow pipeline. */
  orchestrationMs: number;
  /** Temporal + its worker per raw workflow. */
  rawMs: number;
  ratio: number;
}

/** The orchestration's CPU per pipeline ÷ the raw workflow's, from the two levels' CPU ms per run. */
export function orchestrationCpu(reelflow: Record<string, number>, raw: Record<string, number>): OrchestrationCpu {
  const orchestrationMs = (reelflow.temporal ?? 0) + (reelflow.worker ?? 0) + (reelflow.bridge ?? 0);
  const rawMs = (raw.temporal ?? 0) + (raw.rawWorker ?? 0);
  return { orchestrationMs, rawMs, ratio: round(orchestrationMs / Math.max(1, rawMs), 2) };
}
