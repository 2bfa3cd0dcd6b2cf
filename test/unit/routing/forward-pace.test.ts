import { laneWaitMs, RATE_WINDOW_MS, type PacePolicy } from '../../../src/routing/forward-pace';

const policy: PacePolicy = { busyConcurrency: 1, busyRate: 200, quietRate: 50, busyHoldMs: 2_000 };
const view = { lane: 0, ageMs: 0, rate: 0, crowded: false, backlogHigh: false };

describe('laneWaitMs', () => {
  it('lets the busy share signal a delivery that came alone at once (the hand-off)', () => {
    expect(laneWaitMs(policy, { ...view, lane: 0, ageMs: 0, rate: 10 })).toBe(0);
  });

  it('holds a young delivery in the busy share while a burst arrives', () => {
    expect(laneWaitMs(policy, { ...view, lane: 0, ageMs: 500, rate: 600 })).toBe(RATE_WINDOW_MS);
  });

  it('holds a delivery the rate window has not seen in the busy share while commits are crowded (a burst starting)', () => {
    expect(laneWaitMs(policy, { ...view, lane: 0, ageMs: 0, rate: 40, crowded: true })).toBe(RATE_WINDOW_MS);
    expect(laneWaitMs(policy, { ...view, lane: 0, ageMs: 30, rate: 40, crowded: true })).toBe(RATE_WINDOW_MS - 30);
  });

  it('lets the rate decide once the window has seen a crowded delivery: a loaded bridge commits a steady stream in fours too', () => {
    expect(laneWaitMs(policy, { ...view, lane: 0, ageMs: 100, rate: 150, crowded: true })).toBe(0);
    expect(laneWaitMs(policy, { ...view, lane: 0, ageMs: 100, rate: 600, crowded: true })).toBe(RATE_WINDOW_MS);
  });

  it('lets the busy share forward a delivery held busyHoldMs, though the burst goes on', () => {
    expect(laneWaitMs(policy, { ...view, lane: 0, ageMs: 2_000, rate: 600 })).toBe(0);
  });

  it('keeps the other lanes off a delivery the rate window has not seen yet, however quiet', () => {
    expect(laneWaitMs(policy, { ...view, lane: 1, ageMs: 30, rate: 0 })).toBe(RATE_WINDOW_MS - 30);
  });

  it('keeps the other lanes waiting while a burst starts under busyRate (its first commits read as a trickle)', () => {
    expect(laneWaitMs(policy, { ...view, lane: 5, ageMs: 150, rate: 120 })).toBe(RATE_WINDOW_MS);
  });

  it('lets the other lanes forward seen deliveries once arrivals are quiet (the catch-up after a burst)', () => {
    expect(laneWaitMs(policy, { ...view, lane: 31, ageMs: 150, rate: 50 })).toBe(0);
  });

  it('forwards on every lane at once past a quarter of the bound, whatever arrives', () => {
    expect(laneWaitMs(policy, { lane: 0, ageMs: 0, rate: 5_000, crowded: true, backlogHigh: true })).toBe(0);
    expect(laneWaitMs(policy, { lane: 31, ageMs: 0, rate: 5_000, crowded: true, backlogHigh: true })).toBe(0);
  });

  it('never waits longer than the rate window, even for a delivery stamped ahead of its clock (another bridge)', () => {
    expect(laneWaitMs(policy, { ...view, lane: 1, ageMs: -10_000, rate: 0 })).toBe(RATE_WINDOW_MS);
  });

  it('widens the busy share with busyConcurrency', () => {
    expect(laneWaitMs({ ...policy, busyConcurrency: 4 }, { ...view, lane: 3, ageMs: 0, rate: 120 })).toBe(0);
  });
});
