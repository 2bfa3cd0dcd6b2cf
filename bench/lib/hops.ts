/**
 * Where a webhook hand-off's time goes, hop by hop, from two clocks of the same machine: the service's
 * job clocks and the event times of the pipeline's Temporal history.
 *   1. delivery: job A `completedAt` (service) → `WorkflowExecutionSignaled` with A's event (the service
 *      dispatching the webhook, HTTP, the bridge verifying it, reading the route, signalling); in two:
 *      1a. webhook dispatch: `completedAt` → the service sent A's first delivery (the service's own
 *          work, which the local service does for the vendor's);
 *      1b. bridge to signal: delivery sent → signalled (HTTP, the bridge's verify and commit, the
 *          forwarder's claim and signal: reelflow's part);
 *   2. task dispatch: signal → the next `WorkflowTaskStarted` (the server scheduling the workflow task
 *      and the worker polling it);
 *   3. workflow code: that task's `WorkflowTaskStarted` → `WorkflowTaskCompleted` (activation, settle,
 *      the next step's input, the submit scheduled);
 *   4. activity start: task completed → `ActivityTaskStarted` of the next `submitAndSubscribe` (eager
 *      dispatch in the task's answer when the server grants it);
 *   5. submit request: activity started → job B `receivedAt` (service).
 * Where the submit runs as a local activity (a worker told REELFLOW_SERVICE_IDEMPOTENCY=honoured), it
 * runs inside the task the signal woke, so hops 3–5 are one:
 *   3'. submit in task: `WorkflowTaskStarted` → job B `receivedAt` (activation, settle, the next
 *      step's input, the local activity started and its POST received).
 * Where the bridge submitted B itself (a prepared submit, src/routing/prepared.ts: its signal,
 * `jobEventWithNextSubmit`, comes after B's submit), the hand-off is 1a and:
 *   1b'. bridge submit: delivery sent → job B `receivedAt` (HTTP, the bridge's verify and commit, the
 *      forwarder's claim, the next input and the bridge's POST).
 */
import { Client, Connection } from '@temporalio/client';
import { PREPARED_SIGNAL_NAME } from '../../src/routing/prepared';
import { eventMs as ms } from './history-times';
import { summarize, type Summary } from './stats';
import type { BenchStack, JobClocks } from './stack';

export const HOPS = [
  'delivery',
  'webhookDispatch',
  'bridgeToSignal',
  'taskDispatch',
  'workflowCode',
  'activityStart',
  'submitRequest',
  'submitInTask',
  'bridgeSubmit',
] as const;
export type Hop = (typeof HOPS)[number];

export interface HopBreakdown {
  /** Hand-offs broken down (those whose events were all found). */
  n: number;
  hops: Record<Hop, Summary>;
}

/** The request id of the webhook event a `jobEvent` signal carried (JSON payload). */
function signalledRequestId(
  input: { payloads?: Array<{ data?: Uint8Array | null }> | null } | null | undefined,
): string | undefined {
  const data = input?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return (JSON.parse(Buffer.from(data).toString('utf8')) as { request_id?: string }).request_id;
  } catch {
    return undefined;
  }
}

/** Breaks down every hand-off of `workflowIds` (pipelines that learned their outcomes by webhook). */
export async function hopBreakdown(client: Client, workflowIds: string[], jobs: JobClocks[]): Promise<HopBreakdown> {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const consumerOf = new Map<string, JobClocks>();
  for (const job of jobs)
    if (job.inputRequestId && !consumerOf.has(job.inputRequestId)) consumerOf.set(job.inputRequestId, job);
  const samples: Record<Hop, number[]> = {
    delivery: [],
    webhookDispatch: [],
    bridgeToSignal: [],
    taskDispatch: [],
    workflowCode: [],
    activityStart: [],
    submitRequest: [],
    submitInTask: [],
    bridgeSubmit: [],
  };
  for (const workflowId of workflowIds) {
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    for (let i = 0; i < events.length; i += 1) {
      const signalled = events[i]!.workflowExecutionSignaledEventAttributes;
      const prepared = signalled?.signalName === PREPARED_SIGNAL_NAME;
      if (!signalled || (signalled.signalName !== 'jobEvent' && !prepared)) continue;
      const requestId = signalledRequestId(signalled.input);
      const done = requestId ? byId.get(requestId) : undefined;
      const next = requestId ? consumerOf.get(requestId) : undefined;
      if (!done?.completedAt || !next) continue;
      if (prepared) {
        if (typeof done.webhookSentAt !== 'number') continue;
        samples.webhookDispatch.push(done.webhookSentAt - done.completedAt);
        samples.bridgeSubmit.push(next.receivedAt - done.webhookSentAt);
        continue;
      }
      const after = events.slice(i + 1);
      const taskStarted = after.find((e) => e.workflowTaskStartedEventAttributes);
      const taskCompleted = after.find((e) => e.workflowTaskCompletedEventAttributes);
      const scheduled = after.find(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'reelflow.submitAndSubscribe',
      );
      const scheduledId = scheduled ? Number(scheduled.eventId) : NaN;
      const activityStarted = after.find(
        (e) => Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === scheduledId,
      );
      // A submit activity that never started leaves the hand-off out.
      if (!taskStarted || !taskCompleted || (scheduled && !activityStarted)) continue;
      const signalledAt = ms(events[i]!.eventTime);
      const taskStartedAt = ms(taskStarted.eventTime);
      samples.delivery.push(signalledAt - done.completedAt);
      // Runs of a service from before it reported when it sent the webhook have no split.
      if (typeof done.webhookSentAt === 'number') {
        samples.webhookDispatch.push(done.webhookSentAt - done.completedAt);
        samples.bridgeToSignal.push(signalledAt - done.webhookSentAt);
      }
      samples.taskDispatch.push(taskStartedAt - signalledAt);
      // No submit activity after the signal: the submit ran as a local activity in the woken task.
      if (!activityStarted) {
        samples.submitInTask.push(next.receivedAt - taskStartedAt);
        continue;
      }
      const taskCompletedAt = ms(taskCompleted.eventTime);
      const activityStartedAt = ms(activityStarted.eventTime);
      samples.workflowCode.push(taskCompletedAt - taskStartedAt);
      samples.activityStart.push(activityStartedAt - taskCompletedAt);
      samples.submitRequest.push(next.receivedAt - activityStartedAt);
    }
  }
  return {
    n: samples.delivery.length + samples.bridgeSubmit.length,
    hops: Object.fromEntries(HOPS.map((h) => [h, summarize(samples[h])])) as Record<Hop, Summary>,
  };
}

/** Hand-offs among `jobs` (only those created in this phase): next job's receivedAt − its input job's completedAt. */
export function handoffsOf(jobs: JobClocks[], all: Map<string, JobClocks>): number[] {
  const firstConsumer = new Map<string, JobClocks>();
  for (const job of jobs) {
    if (!job.inputRequestId) continue;
    const seen = firstConsumer.get(job.inputRequestId);
    if (!seen || job.receivedAt < seen.receivedAt) firstConsumer.set(job.inputRequestId, job);
  }
  const out: number[] = [];
  for (const [inputId, next] of firstConsumer) {
    const before = all.get(inputId);
    if (before?.completedAt) out.push(next.receivedAt - before.completedAt);
  }
  return out;
}

/**
 * The breakdown of each group of `groups` (workflow ids by label), read from `stack`'s Temporal after
 * the runs; undefined, with a line in the log, when the histories could not be read (the run is kept).
 */
export async function hopBreakdowns<K extends string>(
  stack: BenchStack,
  groups: Record<K, string[]>,
  log: (line: string) => void,
): Promise<Record<K, HopBreakdown> | undefined> {
  try {
    const connection = await Connection.connect({ address: stack.temporalAddress });
    try {
      const client = new Client({ connection });
      const { jobs } = await stack.clocks();
      const out = {} as Record<K, HopBreakdown>;
      for (const label of Object.keys(groups) as K[]) out[label] = await hopBreakdown(client, groups[label], jobs);
      return out;
    } finally {
      await connection.close();
    }
  } catch (error) {
    log(`  hop breakdown failed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}
