import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isGrpcServiceError, type Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { WorkerOptions } from '@temporalio/worker';
import { packageVersion } from '../config/package-version';

/**
 * Worker Versioning (docs/safe-deploys.md): each worker declares the deployment version it runs — a
 * deployment name and a build id — and the server sends an execution's tasks only to workers of the
 * version it started on (pipelines are pinned), so workflow code changes between builds without
 * `patched()`. A new version takes new executions once it is made current.
 */

/** The package version (package.json), the first half of the default build id. */
export { packageVersion };

/**
 * The default build id: the package version and a hash of the workflow bundle's code
 * (`0.3.0-1a2b3c4d5e6f`). Two workers with the same workflow code get the same id; any change of
 * workflow code gives a new one, so it can never run histories recorded by other code.
 */
export function defaultBuildId(bundleCode: string, version: string = packageVersion()): string {
  return `${version}-${createHash('sha256').update(bundleCode).digest('hex').slice(0, 12)}`;
}

/** The code of a bundle as Worker.create takes it (`{ code }` or `{ codePath }`). */
export function bundleCodeOf(bundle: { code: string } | { codePath: string }): string {
  return 'code' in bundle ? bundle.code : readFileSync(bundle.codePath, 'utf8');
}

/**
 * Worker options of a versioned worker: pinned by default (a pipeline finishes on the build it
 * started on). Workflow types that differ say so themselves (`setWorkflowOptions` in src/workflows).
 */
export function versionedWorkerOptions(
  version: WorkerDeploymentVersion,
): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  return { workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' } };
}

/** `deploymentName:buildId`, as visibility spells a version (`TemporalWorkerDeploymentVersion`). */
export function versionKey(version: WorkerDeploymentVersion): string {
  return `${version.deploymentName}:${version.buildId}`;
}

/** gRPC status codes the deployment API answers with. */
const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;

/** A gRPC error the server answers while a new version's pollers are not registered yet. */
function notRegisteredYet(error: unknown): boolean {
  return isGrpcServiceError(error) && (error.code === GRPC_NOT_FOUND || error.code === GRPC_FAILED_PRECONDITION);
}

/**
 * Makes `version` the current version of its deployment: new executions (and unversioned open ones,
 * and auto-upgrading ones) go to its workers from then on. The server knows a version only once one
 * of its workers polled, so this waits for that (up to `timeoutMs`). Same as
 * `temporal worker deployment set-current-version --deployment-name … --build-id …`.
 */
export async function setCurrentVersion(
  client: Client,
  version: WorkerDeploymentVersion,
  options: { timeoutMs?: number; identity?: string } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    try {
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: client.options.namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        identity: options.identity ?? 'reelflow',
      });
      return;
    } catch (error) {
      if (!notRegisteredYet(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** The current version of a deployment, or null (none yet: unversioned workers take new executions). */
export async function currentVersion(client: Client, deploymentName: string): Promise<WorkerDeploymentVersion | null> {
  try {
    const answer = await client.workflowService.describeWorkerDeployment({
      namespace: client.options.namespace,
      deploymentName,
    });
    const current = answer.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion;
    return current?.buildId && current.deploymentName
      ? { deploymentName: current.deploymentName, buildId: current.buildId }
      : null;
  } catch (error) {
    if (isGrpcServiceError(error) && error.code === GRPC_NOT_FOUND) return null;
    throw error;
  }
}

/**
 * Drain-first (docs/safe-deploys.md): waits until no execution of unversioned workers (0.1.0's) is
 * open on `taskQueue`, checking every `pollMs` (default 10 s) and logging how many it waits for,
 * then makes `version` current. Setting a version current earlier would move those executions onto
 * it, and it cannot replay their histories. Resolves false when `signal` aborted the wait.
 */
export async function setCurrentWhenDrained(
  client: Client,
  version: WorkerDeploymentVersion,
  taskQueue: string,
  options: { pollMs?: number; log?: (line: string) => void; signal?: AbortSignal } = {},
): Promise<boolean> {
  const pollMs = options.pollMs ?? 10_000;
  for (;;) {
    if (options.signal?.aborted) return false;
    const open = await openExecutionsOn(client, 'unversioned', taskQueue);
    if (open === 0) break;
    options.log?.(
      `drain-first: ${open} executions of unversioned workers still open on ${taskQueue}; ${versionKey(version)} becomes current once none is`,
    );
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  await setCurrentVersion(client, version);
  return true;
}

/**
 * How many executions are still open on `version`, or on no version (`'unversioned'`: started by
 * workers without versioning, such as 0.1.0's), counted through visibility. The server's own
 * drainage status is refreshed only every few minutes; visibility answers at once (after its own
 * short indexing delay). `taskQueue` narrows the count to one queue.
 */
export async function openExecutionsOn(
  client: Client,
  version: WorkerDeploymentVersion | 'unversioned',
  taskQueue?: string,
): Promise<number> {
  const on =
    version === 'unversioned'
      ? // Ran on an unversioned worker (BuildIds names it): one that never ran a task has no history
        // a new version could fail to replay, so it may move.
        'TemporalWorkerDeploymentVersion IS NULL AND BuildIds IS NOT NULL'
      : `TemporalWorkerDeploymentVersion = '${versionKey(version)}'`;
  const queue = taskQueue ? ` AND TaskQueue = '${taskQueue}'` : '';
  const { count } = await client.workflow.count(`ExecutionStatus = 'Running' AND ${on}${queue}`);
  return count;
}
