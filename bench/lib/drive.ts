import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { runToEnd, tsNode } from './processes';
import type { DriverConfig, DriverResult } from '../procs/pipelines-driver';
import type { NaiveConfig, NaiveResult } from '../procs/naive-client';
import type { DeliveriesConfig, DeliveriesResult } from '../procs/deliveries';

const PROCS = path.join(__dirname, '..', 'procs');

/** Runs a load-generator process with a JSON config file and reads its JSON result. */
async function runProc<C, R>(name: string, file: string, config: C): Promise<R> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-proc-'));
  const input = path.join(dir, 'config.json');
  const output = path.join(dir, 'result.json');
  fs.writeFileSync(input, JSON.stringify(config));
  try {
    const [cmd, args] = tsNode(path.join(PROCS, file), input, output);
    await runToEnd(`${name}-${randomUUID().slice(0, 6)}`, cmd, args);
    return JSON.parse(fs.readFileSync(output, 'utf8')) as R;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Pipelines or raw workflows from their own driver process. */
export const drivePipelines = (name: string, config: DriverConfig) =>
  runProc<DriverConfig, DriverResult>(name, 'pipelines-driver.ts', config);
/** The naive client process. */
export const driveNaive = (name: string, config: NaiveConfig) =>
  runProc<NaiveConfig, NaiveResult>(name, 'naive-client.ts', config);
/** A webhook load generator process. */
export const driveDeliveries = (name: string, config: DeliveriesConfig) =>
  runProc<DeliveriesConfig, DeliveriesResult>(name, 'deliveries.ts', config);
