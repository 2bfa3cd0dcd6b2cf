import { ACTIVITY_PREFIX, reelflowActivityType } from '../contract/workflow-names';
import { ReelflowPluginOptionsError } from './errors';

/**
 * reelflow's activities as a worker registers them: each under its prefixed type (`reelflow.quoteJob`),
 * the types reelflow's workflow code schedules (src/workflows/activity-proxy.ts).
 */
export function prefixedActivities(activities: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(activities).map(([name, fn]) => [reelflowActivityType(name), fn]));
}

/**
 * A worker's activities: the caller's and reelflow's side by side. A caller's activity under one of
 * reelflow's types would silently replace reelflow's, so it is refused instead, naming `option`.
 */
export function mergeActivities(
  own: object | undefined,
  reelflow: Record<string, unknown>,
  option = 'activities',
): Record<string, unknown> {
  const taken = Object.keys(own ?? {}).filter((name) => name in reelflow);
  if (taken.length > 0)
    throw new ReelflowPluginOptionsError(
      `${option}: ${taken.map((name) => `"${name}"`).join(', ')} ${taken.length === 1 ? 'is' : 'are'} reelflow's own activity type${taken.length === 1 ? '' : 's'}; the ${ACTIVITY_PREFIX} prefix is reserved for reelflow`,
    );
  return { ...(own as Record<string, unknown> | undefined), ...reelflow };
}
