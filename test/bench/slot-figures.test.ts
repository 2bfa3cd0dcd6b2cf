import {
  busyFraction,
  flowShopIdeal,
  handOnTimes,
  makespanMs,
  shareWhileBothWait,
  type EndedJob,
} from '../../bench/lib/slot-figures';
import type { SlotLogEntry } from '../../src/routing/slot-store';

/** The scheduling bench's figures, on records made up so that the right answer is known. */

const job = (key: string, model: string, receivedAt: number, startedAt: number, completedAt: number): EndedJob => ({
  idempotencyKey: key,
  model,
  receivedAt,
  startedAt,
  completedAt,
  webhookSentAt: completedAt + 5,
});

const grant = (
  seq: number,
  holder: string,
  grantedAt: number,
  releasedAt: number | null,
  over: Partial<SlotLogEntry> = {},
): SlotLogEntry => ({
  seq,
  holder,
  workflowId: `wf-${holder}`,
  model: 'a',
  priority: 3,
  fairnessKey: 'k',
  grantedAt,
  releasedAt,
  ...over,
});

describe('the flow-shop ideal', () => {
  it('is the busiest stage’s job-seconds over its slots plus one job of each later stage', () => {
    // Stage a: four 1 s jobs on 2 slots (2 s); stage b: four 0.5 s jobs on 2 slots (1 s).
    const jobs = [0, 1, 2, 3].flatMap((i) => [job(`a${i}`, 'a', 0, 0, 1_000), job(`b${i}`, 'b', 0, 0, 500)]);
    const ideal = flowShopIdeal(jobs, [
      { model: 'a', slots: 2 },
      { model: 'b', slots: 2 },
    ]);
    expect(ideal).toEqual({
      idealMs: 2_500,
      busiest: 'a',
      busiestLoadMs: 2_000,
      earlierStagesMs: 0,
      laterStagesMs: 500,
    });
  });

  it('adds one job of each earlier stage before a busiest later one', () => {
    const jobs = [job('a', 'a', 0, 0, 100), job('b1', 'b', 0, 0, 1_000), job('b2', 'b', 0, 0, 1_000)];
    const stages = [
      { model: 'a', slots: 1 },
      { model: 'b', slots: 1 },
    ];
    expect(flowShopIdeal(jobs, stages)).toMatchObject({ idealMs: 2_100, busiest: 'b', earlierStagesMs: 100 });
  });

  it('measures the makespan from the first submit received to the last completion', () => {
    expect(makespanMs([job('x', 'a', 100, 150, 900), job('y', 'a', 300, 300, 1_400)])).toBe(1_300);
  });
});

describe('the busy fraction', () => {
  it('is 1 when a freed slot is taken at once, and counts the gaps between a completion and the next submit', () => {
    // Two slots; each runs 1 s jobs back to back, the second slot with a 100 ms gap before its last job.
    const jobs = [
      job('a1', 'a', 0, 0, 1_000),
      job('b1', 'a', 0, 0, 1_000),
      job('a2', 'a', 1_000, 1_000, 2_000),
      job('b2', 'a', 1_100, 1_100, 2_100),
    ];
    // Window: 0 (both slots used) → 1,100 (the last submit): 2 × 1,100 slot-ms, 100 of them idle.
    const { busy, windowMs } = busyFraction(jobs, 2);
    expect(windowMs).toBe(1_100);
    expect(busy).toBeCloseTo(2_100 / 2_200, 6);
    expect(busyFraction(jobs.slice(0, 3), 2).busy).toBe(1);
  });

  it('is 0 when the cap was never reached', () => {
    expect(busyFraction([job('a', 'a', 0, 0, 1_000)], 2)).toEqual({ busy: 0, windowMs: 0 });
  });
});

describe('hand-on times', () => {
  it('pairs a grant with the release of the same model at the same instant and times both legs', () => {
    const jobs = [
      job('reelflow:x', 'a', 0, 0, 1_000),
      job('reelflow:y', 'a', 1_050, 1_050, 2_000),
      job('reelflow:z', 'b', 10, 10, 500),
    ];
    const log = [
      grant(1, 'reelflow:x', 0, 1_030),
      grant(2, 'reelflow:z', 10, 520, { model: 'b' }),
      grant(3, 'reelflow:y', 1_030, null),
    ];
    const times = handOnTimes(log, jobs);
    expect(times.handOns).toBe(1);
    expect(times.freedToSubmit.p50).toBe(20);
    expect(times.completedToSubmit.p50).toBe(50);
    expect(times.completedToWebhook.p50).toBe(5);
    expect(times.webhookToFreed.p50).toBe(25);
  });
});

describe('the share of two fairness keys', () => {
  it('counts grants until the first key ran out of waiters', () => {
    const keys = ['h', 'h', 'h', 'l', 'h', 'h', 'h', 'l', 'l', 'l', 'l'];
    const log = keys.map((key, i) => grant(i + 1, `${key}${i}`, i, null, { fairnessKey: key }));
    // The heavier key's last grant is seq 7: 6 heavy and 1 light up to it.
    expect(shareWhileBothWait(log, 'h', 'l')).toEqual({ heavy: 6, light: 1, heavyShare: 6 / 7 });
  });
});
