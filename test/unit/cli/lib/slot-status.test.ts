import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSlotStatus, slotStatusLines, slotStatusOf } from '../../../../src/cli/lib/slot-status';
import { openSqliteRouteStore } from '../../../../src/routing';

const UPSCALE = 'service-upscale-video-fast';
const ask = (holder: string, fairnessKey: string, priority = 3) => ({
  holder,
  workflowId: `wf-${holder}`,
  runId: 'run',
  model: UPSCALE,
  priority,
  fairnessKey,
  weight: 1,
});

describe('reelflow status: the account’s slots', () => {
  it('shows slots in use against each cap, waiters by priority and key, and the batch’s share', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'slot-status-')), 'routes.sqlite');
    const store = openSqliteRouteStore(file);
    const caps = { account: 6, models: { [UPSCALE]: 2 } };
    await store.slots.acquire(ask('a1', 'batch/a'), caps, 1);
    await store.slots.acquire(ask('b1', 'batch/b'), caps, 2);
    await store.slots.acquire(ask('a2', 'batch/a'), caps, 3);
    await store.slots.acquire(ask('a3', 'batch/a'), caps, 4);
    await store.slots.acquire(ask('r', 'pipeline/rush', 1), caps, 5);
    await store.close();
    const env = {
      REELFLOW_ROUTE_STORE: `sqlite:${file}`,
      REELFLOW_ACCOUNT_CONCURRENCY: '6',
      REELFLOW_MODEL_CONCURRENCY: `${UPSCALE}=2`,
    };
    const read = await readSlotStatus('batch/a', env);
    expect(slotStatusLines(read)).toEqual([
      `slots: account 2/6 · ${UPSCALE} 2/2`,
      'waiting for a slot: priority 1: 1 (pipeline/rush 1) · priority 3: 2 (batch/a 2)',
      'batch/a holds 1 of the 2 in use (50%), 2 waiting',
    ]);
    // The same as `reelflow status --json` prints it (`slots`).
    expect(read).toEqual({
      caps,
      inUse: { account: 2, models: { [UPSCALE]: 2 } },
      waiting: [
        { priority: 1, fairnessKey: 'pipeline/rush', count: 1 },
        { priority: 3, fairnessKey: 'batch/a', count: 2 },
      ],
      fairnessKey: 'batch/a',
      held: 1,
      waitingForKey: 2,
    });
    // No cap in this environment (an operator's shell): the workers' slots still show, caps unknown.
    const unknown = await readSlotStatus('batch/a', { REELFLOW_ROUTE_STORE: `sqlite:${file}` });
    expect(unknown).toMatchObject({ caps: null, inUse: { account: 2, models: { [UPSCALE]: 2 } }, held: 1 });
    expect(slotStatusLines(unknown)[0]).toBe(
      `slots in use: account 2 · ${UPSCALE} 2 (caps unknown: set the workers' REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY here too)`,
    );
  });

  it('shows nothing without caps when no slot is in use or waiting, or when there is no store', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'slot-status-')), 'routes.sqlite');
    expect(await readSlotStatus('batch/a', { REELFLOW_ROUTE_STORE: `sqlite:${file}` })).toBeUndefined();
    await openSqliteRouteStore(file).close();
    expect(await readSlotStatus('batch/a', { REELFLOW_ROUTE_STORE: `sqlite:${file}` })).toBeUndefined();
    expect(slotStatusLines(undefined)).toEqual([]);
  });

  it('says when no cap is set on the account but models are capped', () => {
    const snapshot = { heldByModel: {}, heldByKey: {}, waiting: [] };
    const lines = slotStatusLines(slotStatusOf(snapshot, { models: { [UPSCALE]: 1 } }, 'x'));
    expect(lines).toEqual([
      `slots: account 0/no cap · ${UPSCALE} 0/1`,
      'waiting for a slot: none',
      'x holds 0 of the 0 in use, 0 waiting',
    ]);
  });

  it('says so when the route store does not answer and caps are set, and status goes on', async () => {
    // A PostgreSQL address nobody listens on (port 9, discard): the read fails, status does not.
    const read = await readSlotStatus('batch/a', {
      REELFLOW_ROUTE_STORE: 'postgres://reelflow@127.0.0.1:9/reelflow',
      REELFLOW_ACCOUNT_CONCURRENCY: '6',
    });
    expect(read).toEqual({ unavailable: expect.stringMatching(/route store does not answer/) });
    expect(slotStatusLines(read)).toEqual(['slots: the route store does not answer (reelflow doctor checks it)']);
    // Without caps nobody asked for the slots: no line.
    expect(await readSlotStatus('batch/a', { REELFLOW_ROUTE_STORE: 'postgres://reelflow@127.0.0.1:9/reelflow' })).toBe(
      undefined,
    );
  });
});
