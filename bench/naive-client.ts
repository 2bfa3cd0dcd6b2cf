import { createServiceClient } from '../src/client/service-client';
import type { ModelId } from '../src/contract';

/**
 * The baseline reelflow is measured against: what users write today with the popular queue clients.
 * Submit, poll the status every 500 ms until terminal, fetch the result, submit the next step with
 * the previous output. No webhook, no durability. Uses reelflow's own HTTP client (src/client) so the
 * comparison is about the waiting strategy, not the HTTP stack.
 */

export const NAIVE_POLL_MS = 500;

export interface NaiveStep {
  model: ModelId;
  /** Builds the input from the previous step's first output URL (null for the first step). */
  input: (previousUrl: string | null) => Record<string, unknown>;
}

export interface NaiveRun {
  requestIds: string[];
  statusCalls: number;
  finalUrl: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the steps in order the naive way; throws on a failed job (a naive client has no policy). */
export async function runNaiveChain(baseUrl: string, apiKey: string, steps: NaiveStep[]): Promise<NaiveRun> {
  const client = createServiceClient({ baseUrl, apiKey });
  const run: NaiveRun = { requestIds: [], statusCalls: 0, finalUrl: null };
  try {
    let previous: string | null = null;
    for (const step of steps) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const request = await client.submit(step.model, step.input(previous) as any);
      run.requestIds.push(request.request_id);
      for (;;) {
        await sleep(NAIVE_POLL_MS);
        run.statusCalls += 1;
        const status = await client.status(request.request_id, { statusUrl: request.status_url });
        if (status.status === 'COMPLETED') break;
        if (status.status === 'FAILED' || status.status === 'CANCELLED') throw new Error(`job ${request.request_id} ended ${status.status}`);
      }
      const result = await client.result(request.request_id, { responseUrl: request.response_url });
      previous = result.videos[0]?.url ?? null;
    }
    run.finalUrl = previous;
    return run;
  } finally {
    await client.close();
  }
}
