import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';

const { submit } = proxyActivities<{ submit(n: number): Promise<void> }>({ startToCloseTimeout: '10s' });

export const go = defineSignal<[number]>('go');

/** Waits for signal i, then runs activity i: one hand-off per step. */
export async function chain(steps: number): Promise<void> {
  let got = -1;
  setHandler(go, (n) => {
    got = n;
  });
  for (let i = 0; i < steps; i++) {
    await condition(() => got === i);
    await submit(i);
  }
}
