/**
 * The baseline reelflow is measured against, its own process: what users write today with the
 * popular queue clients. Submit, poll the status every `pollMs` until terminal, fetch the result,
 * submit the next step with the previous output. No webhook, no durability. Uses reelflow's own HTTP
 * client (src/client), so the comparison is about the waiting strategy, not the HTTP stack.
 *
 * Each poll loop starts at a random phase (first poll after U(0, pollMs)), so the poller is not
 * phase-locked to the jobs' length.
 *   node -r tsx/cjs bench/procs/naive-client.ts <config.json> <result.json>
 */
import * as fs from 'node:fs';
import { createServiceClient } from '../../src/client/service-client';
import { silentWavDataUri } from '../../test/helpers/inputs';
import { LONG_FORM, longFormInput, REVOICE } from '../lib/shapes';

export interface NaiveConfig {
  serviceUrl: string;
  apiKey: string;
  chains: number;
  revoices: number;
  pollMs: number;
}

export interface NaiveResult {
  chains: string[][];
  statusCalls: number;
  /** Wall clock (ms) just before the first submit, and once every chain's last result was read. */
  startedAt: number;
  endedAt: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const config = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as NaiveConfig;
  const client = createServiceClient({ baseUrl: config.serviceUrl, apiKey: config.apiKey });
  const audio = silentWavDataUri();
  let statusCalls = 0;

  const chain = async (): Promise<string[]> => {
    const ids: string[] = [];
    let previous: string | null = null;
    for (let step = 0; step <= config.revoices; step += 1) {
      const request =
        previous === null
          ? await client.submit(LONG_FORM, longFormInput())
          : await client.submit(REVOICE, { video_url: previous, audio_url: audio });
      ids.push(request.request_id);
      await sleep(Math.random() * config.pollMs);
      for (;;) {
        statusCalls += 1;
        const status = await client.status(request.request_id, { statusUrl: request.status_url });
        if (status.status === 'COMPLETED') break;
        if (status.status === 'FAILED' || status.status === 'CANCELLED')
          throw new Error(`job ${request.request_id} ended ${status.status}`);
        await sleep(config.pollMs);
      }
      const result = await client.result(request.request_id, { responseUrl: request.response_url });
      previous = result.videos[0]?.url ?? null;
      if (!previous) throw new Error(`job ${request.request_id} has no output`);
    }
    return ids;
  };

  const startedAt = Date.now();
  const chains = await Promise.all(Array.from({ length: config.chains }, chain));
  const result: NaiveResult = { chains, statusCalls, startedAt, endedAt: Date.now() };
  fs.writeFileSync(process.argv[3]!, JSON.stringify(result));
  await client.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
