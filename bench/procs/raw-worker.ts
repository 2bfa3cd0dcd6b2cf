/**
 * The raw baseline's worker, its own process: three trivial activities in sequence
 * (bench/procs/raw.workflows.ts) on BENCH_RAW_TASK_QUEUE of TEMPORAL_ADDRESS. Same server, same
 * server flags as reelflow's worker; the bundle is built once at start, before "raw worker ready".
 */
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const noop = () => undefined;
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./raw.workflows'),
    logger: { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop },
  });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' });
  const worker = await Worker.create({
    connection,
    taskQueue: process.env.BENCH_RAW_TASK_QUEUE ?? 'bench-raw',
    workflowBundle: bundle,
    activities: { rawStep: (step: number, input: string) => Promise.resolve(`${input}/${step}`) },
  });
  console.log('raw worker ready');
  await worker.run();
  await connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
