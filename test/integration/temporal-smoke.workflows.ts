import { proxyActivities, sleep } from '@temporalio/workflow';

const { greet } = proxyActivities<{ greet(name: string): Promise<string> }>({ startToCloseTimeout: '10 seconds' });

/** Smallest workflow that proves a real server, a real worker and a real activity run. */
export async function smokeWorkflow(name: string, sleepMs: number): Promise<string> {
  await sleep(sleepMs);
  return greet(name);
}
