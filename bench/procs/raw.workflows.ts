/**
 * The raw ceiling for bench/throughput.ts (run by bench/procs/raw-worker.ts): a workflow with three trivial activities in sequence,
 * the same shape as a three-step pipeline with every piece of reelflow taken out (no service, no
 * job workflows, no rendezvous, no webhooks). Bundled on its own for the bench's raw worker.
 */
import { proxyActivities } from '@temporalio/workflow';

/** The three trivial activities (implemented in bench/throughput.ts). */
export interface RawActivities {
  rawStep(step: number, input: string): Promise<string>;
}

const { rawStep } = proxyActivities<RawActivities>({ startToCloseTimeout: '30 seconds' });

/** Three activities in sequence, each fed the previous one's output, like the pipeline's steps. */
export async function rawThreeStepWorkflow(seed: string): Promise<string> {
  const first = await rawStep(1, seed);
  const second = await rawStep(2, first);
  return rawStep(3, second);
}
