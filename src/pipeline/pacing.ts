/**
 * Pacing of fallback status polls. A job waits for its webhook; polls only cover a lost one.
 *
 *   delay before poll k (k = 0, 1, 2, ...) = min(capSeconds, firstPollSeconds × factor^k)
 *
 * measured from the previous poll (poll 0: from the moment the submit is acknowledged). `firstPollSeconds` defaults to the
 * model's expected run time, `factor` to 2 and `capSeconds` to 300. Example, upscale (60 s):
 * polls at 60, 180, 420, 720, 1020, ... s after submit. A healthy webhook path costs zero polls.
 */
export interface PollPacing {
  firstPollSeconds: number;
  factor: number;
  capSeconds: number;
}

export const DEFAULT_POLL_FACTOR = 2;
export const DEFAULT_POLL_CAP_SECONDS = 300;

/** Pacing while waiting for a cancelled job to reach a terminal state: it should be quick. */
export const CANCEL_POLL_PACING: PollPacing = { firstPollSeconds: 1, factor: 2, capSeconds: 30 };

/** Fills pacing defaults from the model's expected run time. */
export function resolvePacing(expectedRunSeconds: number, overrides: Partial<PollPacing> = {}): PollPacing {
  return {
    firstPollSeconds: overrides.firstPollSeconds ?? expectedRunSeconds,
    factor: overrides.factor ?? DEFAULT_POLL_FACTOR,
    capSeconds: overrides.capSeconds ?? DEFAULT_POLL_CAP_SECONDS,
  };
}

/** Seconds to wait before poll `k` (0-based), counted from the previous poll or the submit. */
export function pollDelaySeconds(pacing: PollPacing, k: number): number {
  return Math.min(pacing.capSeconds, pacing.firstPollSeconds * pacing.factor ** k);
}

/** Seconds after the submit at which poll `k` happens. */
export function pollOffsetSeconds(pacing: PollPacing, k: number): number {
  let total = 0;
  for (let i = 0; i <= k; i += 1) total += pollDelaySeconds(pacing, i);
  return total;
}

/** How many polls happen within `elapsedSeconds` of the submit (a poll exactly at the bound counts). */
export function pollsWithin(pacing: PollPacing, elapsedSeconds: number): number {
  let count = 0;
  let at = 0;
  for (;;) {
    at += pollDelaySeconds(pacing, count);
    if (at > elapsedSeconds + 1e-9) return count;
    count += 1;
  }
}
