import { randomUUID } from 'node:crypto';
import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { createSubscribeActivity, createTemporalSink, type EventSink, type SubscribeActivities } from '../../src/bridge';
import { rendezvousWorkflowId } from '../../src/workflows/definitions';
import type { RendezvousSummary } from '../../src/workflows/webhook-rendezvous';
import { makeEvent, quietBundlerLogger } from './bridge-fixtures';
import { stopSignal, subscriberStateQuery } from './bridge.workflows';

/**
 * The rendezvous workflow's own guarantees, driven through the same sink and subscribe activity the
 * bridge and the job workflow use, on a real dev server (timers here are a second or two of real time).
 */

const TASK_QUEUE = `rendezvous-${randomUUID()}`;
const RENDEZVOUS = { ttlMs: 1_500, graceMs: 500 };

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let worker: Worker;
let workerRun: Promise<void>;
let sink: EventSink;
let subscribe: SubscribeActivities;

beforeAll(async () => {
  bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./bridge.workflows'), logger: quietBundlerLogger() });
  env = await startDevServer();
  subscribe = createSubscribeActivity(env.client, TASK_QUEUE, RENDEZVOUS);
  worker = await Worker.create({ connection: env.nativeConnection, taskQueue: TASK_QUEUE, workflowBundle: bundle, activities: subscribe });
  workerRun = worker.run();
  sink = createTemporalSink({ client: env.client, taskQueue: TASK_QUEUE, rendezvous: RENDEZVOUS });
});

afterAll(async () => {
  worker?.shutdown();
  await workerRun;
  await env?.teardown();
});

const rendezvous = (requestId: string) => env.client.workflow.getHandle<() => Promise<RendezvousSummary>>(rendezvousWorkflowId(requestId));

function startSubscriber(requestIds: string[], options: { subscribe: boolean; stayOpen?: boolean }) {
  return env.client.workflow.start('testSubscriberWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: `subscriber/${randomUUID()}`,
    args: [requestIds, options],
  });
}

describe('webhook rendezvous workflow', () => {
  it('ends by itself when nobody subscribes to a delivered event', async () => {
    const event = makeEvent();
    await sink.deliver(event);
    const summary = await rendezvous(event.request_id).result();
    expect(summary).toMatchObject({ endedBecause: 'expired_unsubscribed', eventIds: [event.event_id], forwarded: {} });
  });

  it('ends by itself when a subscription never receives an event (the job falls back to polling)', async () => {
    const requestId = `req-${randomUUID()}`;
    await subscribe.subscribeToWebhook(requestId, `subscriber/${randomUUID()}`);
    const summary = await rendezvous(requestId).result();
    expect(summary.endedBecause).toBe('expired_subscribed');
    expect(summary.eventIds).toEqual([]);
  });

  it('drops a subscriber that does not exist instead of failing or looping', async () => {
    const event = makeEvent();
    await subscribe.subscribeToWebhook(event.request_id, 'no-such-workflow');
    await sink.deliver(event);
    const summary = await rendezvous(event.request_id).result();
    expect(summary).toMatchObject({ endedBecause: 'subscribers_gone', goneSubscribers: ['no-such-workflow'], forwarded: {} });
    expect((await rendezvous(event.request_id).describe()).status.name).toBe('COMPLETED');
  });

  it('forwards non-terminal events and keeps waiting until a terminal one', async () => {
    const requestId = `req-${randomUUID()}`;
    const progress = makeEvent({ request_id: requestId, event_type: 'generation.progress', data: { status: 'IN_PROGRESS' } });
    const failed = makeEvent({ request_id: requestId, event_type: 'generation.failed', status: 'ERROR', data: null, error: { code: 'x', message: 'y' } });
    const done = makeEvent({ request_id: requestId });
    const subscriber = await startSubscriber([requestId], { subscribe: true });
    await sink.deliver(progress);
    await sink.deliver(done);
    await subscriber.result();
    const summary = await rendezvous(requestId).result();
    expect(summary.endedBecause).toBe('terminal_forwarded');
    expect(summary.forwarded[subscriber.workflowId]).toEqual([progress.event_id, done.event_id]);

    // A failure event is terminal too.
    const other = makeEvent({ ...failed, request_id: `req-${randomUUID()}` });
    const watcher = await startSubscriber([other.request_id], { subscribe: true, stayOpen: true });
    await sink.deliver(other);
    expect((await rendezvous(other.request_id).result()).endedBecause).toBe('terminal_forwarded');
    await watcher.signal(stopSignal);
    expect((await watcher.result()).events.map((e: { event_id: string }) => e.event_id)).toEqual([other.event_id]);
  });

  it('a late duplicate after the rendezvous closed starts a fresh one that a deduping subscriber shrugs off', async () => {
    const event = makeEvent();
    const subscriber = await startSubscriber([event.request_id], { subscribe: true, stayOpen: true });
    await sink.deliver(event);
    const first = await rendezvous(event.request_id).result();
    expect(first.forwarded[subscriber.workflowId]).toEqual([event.event_id]);

    // The service retries after the grace: a new execution under the same id holds the event, unsubscribed.
    await sink.deliver(event);
    expect((await subscriber.query(subscriberStateQuery)).received).toBe(1);
    // If the job re-subscribes (say, an activity retry), it gets the event again and dedupes it.
    await subscribe.subscribeToWebhook(event.request_id, subscriber.workflowId);
    const second = await rendezvous(event.request_id).result();
    expect(second.forwarded[subscriber.workflowId]).toEqual([event.event_id]);
    const state = await subscriber.query(subscriberStateQuery);
    expect(state.received).toBe(2);
    expect(state.events.map((e) => e.event_id)).toEqual([event.event_id]);
    await subscriber.signal(stopSignal);
    await subscriber.result();
  });
});
