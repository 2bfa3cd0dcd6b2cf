import {
  proxyActivities,
  proxyLocalActivities,
  type ActivityInterfaceFor,
  type ActivityOptions,
  type LocalActivityInterfaceFor,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import { reelflowActivityType } from '../contract/workflow-names';

/**
 * reelflow's activities are registered under prefixed types (`reelflow.quoteJob`) so they never collide
 * with a team's own: `proxy.quoteJob(…)` schedules `reelflow.quoteJob` (ESLint refuses the SDK's proxies here).
 */

function prefixed<P extends object>(raw: object): P {
  const byType = raw as Record<string, unknown>;
  return new Proxy({} as P, {
    get(_target, name) {
      if (typeof name !== 'string') {
        throw new TypeError(`Only strings are supported for Activity types, got: ${String(name)}`);
      }
      return byType[reelflowActivityType(name)];
    },
  });
}

/** `proxyActivities` over reelflow's prefixed activity types. */
export function proxyReelflowActivities<A>(options: ActivityOptions): ActivityInterfaceFor<A> {
  return prefixed<ActivityInterfaceFor<A>>(proxyActivities(options));
}

/** `proxyLocalActivities` over reelflow's prefixed activity types. */
export function proxyReelflowLocalActivities<A>(options: LocalActivityOptions): LocalActivityInterfaceFor<A> {
  return prefixed<LocalActivityInterfaceFor<A>>(proxyLocalActivities(options));
}
