import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { buildSync } from 'esbuild';
import { runToEnd, tsNode } from './processes';
import type { DriverConfig, DriverResult } from '../procs/pipelines-driver';
import type { NaiveConfig, NaiveResult } from '../procs/naive-client';
import type { DeliveriesConfig, DeliveriesResult } from '../procs/deliveries';

const PROCS = path.join(__dirname, '..', 'procs');

/** Runs a load-generator process with a JSON config file and reads its JSON result. */
async function runProc<C, R>(name: string, file: string, config: C, bundle?: string): Promise<R> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-proc-'));
  const input = path.join(dir, 'config.json');
  const output = path.join(dir, 'result.json');
  fs.writeFileSync(input, JSON.stringify(config));
  try {
    // A bundle runs on node alone; a .ts file through tsx (its compile is part of the process's time).
    const [cmd, args] = bundle
      ? [process.execPath, [bundle, input, output]]
      : tsNode(path.join(PROCS, file), input, output);
    await runToEnd(`${name}-${randomUUID().slice(0, 6)}`, cmd, args);
    return JSON.parse(fs.readFileSync(output, 'utf8')) as R;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Pipelines or raw workflows from their own driver process. */
export const drivePipelines = (name: string, config: DriverConfig) =>
  runProc<DriverConfig, DriverResult>(name, 'pipelines-driver.ts', config);
/** The naive client process (through tsx, or its `bundle` from bundleNaiveClient on node alone). */
export const driveNaive = (name: string, config: NaiveConfig, bundle?: string) =>
  runProc<NaiveConfig, NaiveResult>(name, 'naive-client.ts', config, bundle);

/**
 * The naive client compiled into one plain JavaScript file (esbuild, as a team would ship a poller), so
 * that its process time, spawn to exit, compares with `reelflow run`'s compiled CLI: no TypeScript
 * loader in either start. Returns the file.
 */
export function bundleNaiveClient(outDir: string): string {
  const outfile = path.join(outDir, 'naive-client.cjs');
  buildSync({
    entryPoints: [path.join(PROCS, 'naive-client.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    outfile,
    logLevel: 'error',
  });
  return outfile;
}
/** A webhook load generator process. */
export const driveDeliveries = (name: string, config: DeliveriesConfig) =>
  runProc<DeliveriesConfig, DeliveriesResult>(name, 'deliveries.ts', config);
