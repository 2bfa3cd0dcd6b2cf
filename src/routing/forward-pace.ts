/**
 * When a forwarder lane may signal its next delivery. On a machine the bridge shares with Temporal and
 * the worker, every signal starts a pipeline's work (about 100 ms of CPU in all), so while a burst
 * arrives the forwarder paces itself and the acknowledgements keep the CPU. Pure, so each rule has a test.
 */

/** The span `Inbox.recentRate` reads: a burst's rate is known once this much of it has arrived. */
export const RATE_WINDOW_MS = 100;

/**
 * Deliveries one commit of the inbox must carry for the bridge to count as crowded for the next
 * RATE_WINDOW_MS. A group commit takes about a millisecond, so four in one come from senders at work
 * together: at a steady 200/s, three more arrivals within a commit's millisecond happen about once in a
 * thousand, while a burst's concurrent senders fill commits from their first round trip, before the
 * 100 ms rate window has seen enough of them to read over `busyRate`. A bridge slowed by a loaded
 * machine commits a steady stream in fours too, so crowding only holds a delivery the rate window has
 * not seen yet: at most RATE_WINDOW_MS, after which the rate decides.
 */
export const CROWDED_COMMIT = 4;

/** The forwarder's pacing settings (`ForwarderOptions`, with their defaults applied). */
export interface PacePolicy {
  /** Lanes below this one are the busy share: they forward while a burst arrives (aged deliveries only). */
  busyConcurrency: number;
  /** Deliveries a second above which the busy share holds deliveries younger than `busyHoldMs`. */
  busyRate: number;
  /** Deliveries a second at or under which the lanes beyond the busy share forward too. */
  quietRate: number;
  /** Age at which the busy share forwards a delivery even while a burst goes on. */
  busyHoldMs: number;
}

/** What a lane knows when it looks at its next delivery. */
export interface LaneView {
  lane: number;
  /** How long ago the bridge committed the delivery (ms). */
  ageMs: number;
  /** Deliveries a second arriving now (`Inbox.recentRate`). */
  rate: number;
  /** A commit of the last RATE_WINDOW_MS carried CROWDED_COMMIT deliveries or more (`Inbox.crowded`): a burst may have begun. */
  crowded: boolean;
  /** The backlog passed a quarter of the inbox's bound: every lane forwards, so an overload ends in 503s, not a backlog that never drains. */
  backlogHigh: boolean;
}

/** How long until the rate window has seen a delivery `ageMs` old (at most the window: another bridge's clock may run ahead). */
const untilSeenMs = (ageMs: number): number => Math.min(RATE_WINDOW_MS, RATE_WINDOW_MS - ageMs);

/** Milliseconds the lane waits before it looks again; 0 when it signals the delivery now. */
export function laneWaitMs(policy: PacePolicy, view: LaneView): number {
  if (view.backlogHigh) return 0;
  if (view.lane >= policy.busyConcurrency) {
    // A burst's first commits read as a trickle (its generators and the bridge warm up), so the extra
    // lanes take only deliveries the rate window has seen, and only while arrivals are quiet.
    if (view.ageMs < RATE_WINDOW_MS) return untilSeenMs(view.ageMs);
    return view.rate > policy.quietRate ? RATE_WINDOW_MS : 0;
  }
  // The busy share forwards a delivery that came alone at once. While commits are crowded it holds one
  // the rate window has not seen yet (a burst's first round trip), and while a burst arrives, young ones.
  if (view.crowded && view.ageMs < RATE_WINDOW_MS) return untilSeenMs(view.ageMs);
  return view.rate > policy.busyRate && view.ageMs < policy.busyHoldMs ? RATE_WINDOW_MS : 0;
}
