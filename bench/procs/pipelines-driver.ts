/**
 * Load generator for pipelines and the raw baseline, its own process:
 *   node -r tsx/cjs bench/procs/pipelines-driver.ts <config.json> <result.json>
 * Starts pipelines the way `reelflow run` does (the public workflow type, id and input of the CLI)
 * and reports when each ended, from this process's clock. Modes:
 *  - batch: `count` runs at once, each awaited;
 *  - closed-loop: `concurrency` callers each start a run, await it, start the next, for `windowSeconds`;
 *    runs still in flight at the close are awaited and not counted;
 *  - start: only starts `count` runs (50 at a time) and exits (they keep running).
 */
import * as fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { WORKFLOW_TYPES, pipelineWorkflowId } from '../../src/workflows/definitions';
import type { PipelineWorkflowInput } from '../../src/workflows/pipeline-types';
import { specFor, type Shape } from '../lib/shapes';

export interface DriverConfig {
  temporalAddress: string;
  taskQueue: string;
  kind: 'pipeline' | 'raw';
  shape?: Shape;
  /** The service origin (literal inputs' URI rules). */
  serviceUrl?: string;
  mode: 'batch' | 'closed-loop' | 'start';
  count?: number;
  concurrency?: number;
  windowSeconds?: number;
  prefix: string;
}

export interface DriverRun {
  name: string;
  ok: boolean;
  startedAt: number;
  endedAt: number;
  error?: string;
}

export interface DriverResult {
  runs: DriverRun[];
  /** Closed loop: runs that ended inside the window, and the window's real length. */
  counted?: number;
  windowSeconds?: number;
}

async function main(): Promise<void> {
  const config = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as DriverConfig;
  const connection = await Connection.connect({ address: config.temporalAddress });
  const client = new Client({ connection });
  const runs: DriverRun[] = [];

  const start = async (name: string) => {
    if (config.kind === 'raw') {
      return client.workflow.start('rawThreeStepWorkflow', {
        taskQueue: config.taskQueue,
        workflowId: name,
        args: ['x'],
      });
    }
    const spec = specFor(config.shape!, name, config.serviceUrl!);
    const input: PipelineWorkflowInput = { spec, uriRules: { allowedOrigins: [config.serviceUrl!] } };
    return client.workflow.start(WORKFLOW_TYPES.pipeline, {
      taskQueue: config.taskQueue,
      workflowId: pipelineWorkflowId(spec.name),
      args: [input],
    });
  };
  const once = async (name: string): Promise<DriverRun> => {
    const startedAt = Date.now();
    try {
      const handle = await start(name);
      const result = (await handle.result()) as unknown;
      const ok = config.kind === 'raw' ? result === 'x/1/2/3' : (result as { status?: string }).status === 'completed';
      return {
        name,
        ok,
        startedAt,
        endedAt: Date.now(),
        ...(ok ? {} : { error: JSON.stringify(result).slice(0, 300) }),
      };
    } catch (error) {
      return {
        name,
        ok: false,
        startedAt,
        endedAt: Date.now(),
        error: error instanceof Error ? error.message : String(error),
      };
    }
  };

  const result: DriverResult = { runs };
  if (config.mode === 'batch') {
    runs.push(
      ...(await Promise.all(Array.from({ length: config.count ?? 1 }, (_, i) => once(`${config.prefix}-${i}`)))),
    );
  } else if (config.mode === 'start') {
    const count = config.count ?? 1;
    for (let i = 0; i < count; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, count - i) }, async (_, j) => {
          const name = `${config.prefix}-${i + j}`;
          await start(name);
          runs.push({ name, ok: true, startedAt: Date.now(), endedAt: Date.now() });
        }),
      );
    }
  } else {
    const t0 = Date.now();
    const deadline = t0 + (config.windowSeconds ?? 10) * 1000;
    let seq = 0;
    let counted = 0;
    await Promise.all(
      Array.from({ length: config.concurrency ?? 1 }, async () => {
        while (Date.now() < deadline) {
          const run = await once(`${config.prefix}-${(seq += 1)}`);
          runs.push(run);
          if (run.endedAt <= deadline && run.ok) counted += 1;
        }
      }),
    );
    result.counted = counted;
    result.windowSeconds = (deadline - t0) / 1000;
  }
  fs.writeFileSync(process.argv[3]!, JSON.stringify(result));
  await connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
