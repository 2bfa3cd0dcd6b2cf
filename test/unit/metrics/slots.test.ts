import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { openSqliteRouteStore } from '../../../src/routing';
import { slotMetrics } from '../../../src/metrics/slots';
import type { SlotCaps } from '../../../src/routing/slot-store';

describe('slot metrics', () => {
  it('show slots in use and caps by scope, waiters by priority and grants by fairness key', async () => {
    const store = openSqliteRouteStore(join(mkdtempSync(join(tmpdir(), 'slot-metrics-')), 'routes.sqlite'));
    const caps: SlotCaps = { account: 2, models: { 'service-upscale-video-fast': 1 } };
    const ask = (holder: string, priority: number) => ({
      holder,
      workflowId: `wf-${holder}`,
      runId: 'run',
      model: 'service-upscale-video-fast',
      priority,
      fairnessKey: 'batch/a',
      weight: 1,
    });
    await store.slots.acquire(ask('h', 3), caps, 1);
    await store.slots.acquire(ask('w1', 1), caps, 2);
    await store.slots.acquire(ask('w2', 3), caps, 3);
    const registry = new Registry();
    const metrics = slotMetrics({ snapshot: () => store.slots.snapshot(), caps }, registry);
    metrics.granted('batch/a');
    const text = await registry.metrics();
    expect(text).toContain('reelflow_slots_in_use{scope="account"} 1');
    expect(text).toContain('reelflow_slots_in_use{scope="service-upscale-video-fast"} 1');
    expect(text).toContain('reelflow_slots_cap{scope="account"} 2');
    expect(text).toContain('reelflow_slots_cap{scope="service-upscale-video-fast"} 1');
    expect(text).toContain('reelflow_slots_waiting{priority="1"} 1');
    expect(text).toContain('reelflow_slots_waiting{priority="3"} 1');
    expect(text).toContain('reelflow_slot_grants_total{fairness_key="batch/a"} 1');
    await store.close();
  });
});
