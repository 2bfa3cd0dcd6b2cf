import { proxyActivities } from '@temporalio/workflow';

/**
 * A team's own workflows module for test/integration/worker-plugin.test.ts: its own activity under a
 * name reelflow also uses unprefixed (`quoteJob`), which must stay the team's.
 */
const own = proxyActivities<{ quoteJob(what: string): Promise<string> }>({ startToCloseTimeout: '10 seconds' });

export async function teamWorkflow(what: string): Promise<string> {
  return own.quoteJob(what);
}
