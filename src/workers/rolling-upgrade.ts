import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { currentVersion, openExecutionsOn, setCurrentVersion, versionKey } from './worker-deployment';

/**
 * The steps of a rolling upgrade between two worker versions of one deployment (docs/safe-deploys.md,
 * "Rolling upgrade"), which `reelflow deploy` runs in order: the new version's workers are already
 * polling beside the old ones; `promote` ramps (optionally) and makes the new version current; then
 * `waitUntilNothingPinned` waits until no open execution is pinned to the old version, after which
 * its workers may stop. Pipelines are pinned: the ones started on the old version finish there.
 */

const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Options of `promote`. */
export interface PromoteOptions {
  /** Percentage of new executions the new version takes before it becomes current; none when unset. */
  rampPercent?: number;
  /** How long to stay at `rampPercent` before making it current. */
  rampMs?: number;
  /** How long to wait for the new version's workers to poll (the server knows a version only then). */
  registerTimeoutMs?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Makes `to` current, after a ramp when asked: during the ramp `rampPercent` of new executions start
 * on `to`, the rest on the current version; executions already open stay where they are pinned.
 */
export async function promote(
  client: Client,
  to: WorkerDeploymentVersion,
  options: PromoteOptions = {},
): Promise<void> {
  const timeoutMs = options.registerTimeoutMs ?? 60_000;
  if (options.rampPercent !== undefined) {
    await whenRegistered(timeoutMs, () =>
      client.workflowService.setWorkerDeploymentRampingVersion({
        namespace: client.options.namespace,
        deploymentName: to.deploymentName,
        buildId: to.buildId,
        percentage: options.rampPercent,
        identity: 'reelflow deploy',
      }),
    );
    options.log?.(
      `${versionKey(to)} ramping: ${options.rampPercent}% of new executions for ${(options.rampMs ?? 0) / 1000} s`,
    );
    await sleep(options.rampMs ?? 0, options.signal);
  }
  await setCurrentVersion(client, to, { timeoutMs, identity: 'reelflow deploy' });
  options.log?.(`${versionKey(to)} is current: new executions start on it`);
}

/** Retries `call` while the server does not know the version yet (its workers have not polled). */
async function whenRegistered(timeoutMs: number, call: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await call();
      return;
    } catch (error) {
      const notYet =
        isGrpcServiceError(error) && (error.code === GRPC_NOT_FOUND || error.code === GRPC_FAILED_PRECONDITION);
      if (!notYet || Date.now() > deadline) throw error;
      await sleep(200);
    }
  }
}

/** Options of `waitUntilNothingPinned`. */
export interface DrainOptions {
  /** Between two counts. Default 10 s. */
  pollMs?: number;
  /** Gives up (resolves false) after this long. Default: never. */
  timeoutMs?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Narrows the count to one task queue. */
  taskQueue?: string;
}

/**
 * Waits until no open execution is pinned to `from` (counted through visibility: it answers at once,
 * where the deployment's drainage status is refreshed every few minutes), and `from` is not current:
 * a current version takes new executions. Two counts of 0 in a row, `pollMs` apart, so an execution
 * visibility indexed late is not missed. Resolves true when drained, false on timeout or abort.
 */
export async function waitUntilNothingPinned(
  client: Client,
  from: WorkerDeploymentVersion,
  options: DrainOptions = {},
): Promise<boolean> {
  const pollMs = options.pollMs ?? 10_000;
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  let zeros = 0;
  while (!options.signal?.aborted && Date.now() <= deadline) {
    const current = await currentVersion(client, from.deploymentName);
    if (current?.buildId === from.buildId)
      throw new Error(`${versionKey(from)} is still current: make the new version current first`);
    const open = await openExecutionsOn(client, from, options.taskQueue);
    zeros = open === 0 ? zeros + 1 : 0;
    if (zeros >= 2) return true;
    options.log?.(
      open === 0
        ? `nothing pinned to ${versionKey(from)}; checking once more`
        : `${open} open executions pinned to ${versionKey(from)}; its workers stay until none is`,
    );
    await sleep(pollMs, options.signal);
  }
  return false;
}
