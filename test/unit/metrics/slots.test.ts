import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { openSqliteRouteStore } from '../../../src/routing';
import { LONE_PIPELINES, OTHER_KEYS, SLOT_KEY_LABELS, slotMetrics } from '../../../src/metrics/slots';
import type { SlotCaps } from '../../../src/routing/slot-store';

describe('slot metrics', () => {
  it('show slots in use and caps by scope, waiters by priority and grants by fairness key', async () => {
    const store = openSqliteRouteStore(join(mkdtempSync(join(tmpdir(), 'slot-metrics-')), 'routes.sqlite'));
    const caps: SlotCaps = { account: 2, models: { 'service-upscale-video-fast': 1 } };
    const ask = (holder: string, priority: number, fairnessKey = 'batch/a') => ({
      holder,
      workflowId: `wf-${holder}`,
      runId: 'run',
      model: 'service-upscale-video-fast',
      priority,
      fairnessKey,
      weight: 1,
    });
    await store.slots.acquire(ask('h', 3), caps, 1);
    await store.slots.acquire(ask('w1', 1), caps, 2);
    await store.slots.acquire(ask('w2', 3), caps, 3);
    const registry = new Registry();
    const metrics = slotMetrics({ snapshot: () => store.slots.snapshot(), caps }, registry);
    metrics.granted('batch/a');
    metrics.granted('pipeline/rush');
    metrics.granted('pipeline/teaser');
    const text = await registry.metrics();
    expect(text).toContain('reelflow_slots_in_use{scope="account"} 1');
    expect(text).toContain('reelflow_slots_in_use{scope="service-upscale-video-fast"} 1');
    expect(text).toContain('reelflow_slots_cap{scope="account"} 2');
    expect(text).toContain('reelflow_slots_cap{scope="service-upscale-video-fast"} 1');
    expect(text).toContain('reelflow_slots_waiting{priority="1",fairness_key="batch/a"} 1');
    expect(text).toContain('reelflow_slots_waiting{priority="3",fairness_key="batch/a"} 1');
    expect(text).toContain('reelflow_slots_in_use_by_key{fairness_key="batch/a"} 1');
    expect(text).toContain('reelflow_slot_grants_total{fairness_key="batch/a"} 1');
    // Lone pipelines (key `pipeline/<name>`) count under one label, not one series per run.
    expect(text).toContain(`reelflow_slot_grants_total{fairness_key="${LONE_PIPELINES}"} 2`);

    // Lone pipelines each wait under their own key: past the top keys by waiters, they add up as `other`.
    const lone = Array.from({ length: SLOT_KEY_LABELS + 2 }, (_, i) => `pipeline/p${String(i).padStart(2, '0')}`);
    for (const [i, key] of lone.entries()) await store.slots.acquire(ask(`l${i}`, 3, key), caps, 10 + i);
    for (const n of [1, 2]) await store.slots.acquire(ask(`b${n}`, 2, 'batch/b'), caps, 30 + n);
    const crowded = await registry.metrics();
    const waiting = crowded.split('\n').filter((line) => line.startsWith('reelflow_slots_waiting{'));
    // batch/a and batch/b (2 waiting each) lead, then the lone pipelines by name: the last four are `other`.
    expect(waiting).toContain('reelflow_slots_waiting{priority="2",fairness_key="batch/b"} 2');
    expect(waiting).toContain('reelflow_slots_waiting{priority="3",fairness_key="pipeline/p00"} 1');
    expect(waiting).toContain('reelflow_slots_waiting{priority="3",fairness_key="pipeline/p07"} 1');
    expect(waiting).toContain(`reelflow_slots_waiting{priority="3",fairness_key="${OTHER_KEYS}"} 4`);
    expect(waiting.filter((line) => line.includes('pipeline/p'))).toHaveLength(SLOT_KEY_LABELS - 2);
    const counted = waiting.reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
    expect(counted).toBe(2 + lone.length + 2);
    await store.close();
  });
});
