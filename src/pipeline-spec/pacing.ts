/**
 * Pacing of fallback status polls. A job waits for its webhook; polls only cover a lost one.
 *
 *   delay before poll k (k = 0, 1, 2, ...) = min(capSeconds, firstPollSeconds × factor^k)
 *
 * measured from the previous poll (poll 0: from the moment the submit is acknowledged). `firstPollSeconds` defaults to the
 * model's expected run time, `factor` to 2 and `capSeconds` to 300. Example, upscale (60 s):
 * polls at 60, 180, 420, 720, 1020, ... s after submit. A healthy webhook path costs zero polls.
 *
 * One extra **early status check** comes `earlyCheckSeconds` (default 5) after the submit, before
 * the paced polls: a service that sends no failure events would otherwise make a job it refused at
 * once wait for the first paced poll (minutes). It is a poll like the others (counted in `polls`)
 * and happens only while no webhook has answered; 0 turns it off. See docs/preflight.md.
 */
export interface PollPacing {
  firstPollSeconds: number;
  factor: number;
  capSeconds: number;
  /** Seconds after the submit of the one early status check; 0 or absent: none. */
  earlyCheckSeconds?: number;
}

export const DEFAULT_POLL_FACTOR = 2;
export const DEFAULT_POLL_CAP_SECONDS = 300;
/** Default delay of the early status check after a submit. */
export const DEFAULT_EARLY_CHECK_SECONDS = 5;

/** Pacing while waiting for a cancelled job to reach a terminal state: it should be quick. */
export const CANCEL_POLL_PACING: PollPacing = { firstPollSeconds: 1, factor: 2, capSeconds: 30 };

/** Fills pacing defaults from the model's expected run time. */
export function resolvePacing(expectedRunSeconds: number, overrides: Partial<PollPacing> = {}): PollPacing {
  return {
    firstPollSeconds: overrides.firstPollSeconds ?? expectedRunSeconds,
    factor: overrides.factor ?? DEFAULT_POLL_FACTOR,
    capSeconds: overrides.capSeconds ?? DEFAULT_POLL_CAP_SECONDS,
    earlyCheckSeconds: overrides.earlyCheckSeconds ?? DEFAULT_EARLY_CHECK_SECONDS,
  };
}

/**
 * The early check's delay when it comes before the first paced poll, else null (off, or a first
 * poll that comes sooner anyway).
 */
export function earlyCheckDelaySeconds(pacing: PollPacing): number | null {
  const early = pacing.earlyCheckSeconds ?? 0;
  return early > 0 && early < pollDelaySeconds(pacing, 0) ? early : null;
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
