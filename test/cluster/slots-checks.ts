import { LONG_FORM } from '../helpers/local-service';
import { SLOTS_CAPS, UPSCALE, type SlotsRunFigures } from './slots-run';

/**
 * Slack on the reaper's bound: the sweep's own queries and signals, and this test's polling of the
 * store, take time past the instant the bound names.
 */
export const SWEEP_MARGIN_MS = 5_000;

/**
 * The checks of a slots run (./slots-run.ts), shared by the cluster test and the `npm test` variant
 * on a dev server: declared inside the caller's describe, reading the figures its beforeAll made.
 */
export function slotsRunChecks(figures: () => SlotsRunFigures): void {
  it('every pipeline ends: all completed but the one terminated on purpose', () => {
    const f = figures();
    expect({ completed: f.completed, terminated: f.terminated, other: f.other }).toEqual({
      completed: f.pipelines - 1,
      terminated: 1,
      other: [],
    });
  });

  it("the service's records never show more jobs in flight than the caps, and each cap was reached", () => {
    const { maxInFlight } = figures();
    expect(maxInFlight.all).toBe(SLOTS_CAPS.account);
    expect(maxInFlight.byModel[LONG_FORM]).toBe(SLOTS_CAPS.perModel);
    expect(maxInFlight.byModel[UPSCALE]).toBeLessThanOrEqual(SLOTS_CAPS.perModel);
  });

  it("no idempotency key was submitted twice, though a worker died running the pipelines' activities", () => {
    const f = figures();
    expect(f.keysSubmittedTwice).toEqual([]);
    // Two jobs per completed pipeline, one or two for the terminated one.
    expect(f.jobs).toBeGreaterThanOrEqual(2 * f.completed + 1);
    expect(f.jobs).toBeLessThanOrEqual(2 * f.pipelines);
  });

  it('the worker was SIGKILLed with the caps full, jobs waiting and in flight', () => {
    const { kill } = figures();
    expect(kill.slotsHeld).toBe(SLOTS_CAPS.account);
    expect(kill.waiting).toBeGreaterThan(0);
    expect(kill.jobsInFlight).toBeGreaterThan(0);
  });

  it('a slot a dead worker took for its terminated pipeline leaked, and the reaper freed it within its bound', () => {
    const { leak } = figures();
    expect(leak.heldAfterClose).toBe(true);
    expect(leak.releasedAt).not.toBeNull();
    // Freed by the reaper (it looks at a slot 30 s after its grant), not by a settle.
    expect(leak.releasedAt!).toBeGreaterThanOrEqual(leak.grantedAt + 30_000);
    // Freed no later than the bound plus a margin for the sweep.
    expect(leak.releasedAt! - leak.boundAt).toBeLessThanOrEqual(SWEEP_MARGIN_MS);
  });

  it('after the last run closed, nothing is held and nothing waits, within the bound', () => {
    const { drain } = figures();
    expect(drain.snapshot.heldByModel).toEqual({});
    expect(drain.snapshot.waiting).toEqual([]);
    expect(drain.emptyAt).not.toBeNull();
    expect(drain.emptyAt! - drain.boundAt).toBeLessThanOrEqual(SWEEP_MARGIN_MS);
  });
}
