import { randomUUID } from 'node:crypto';
import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { createTemporalSink, subscribeToRoute, type EventSink, type RouteDelivery } from '../../src/bridge';
import { ROUTE_WORKFLOW_TYPE, routeWorkflowId, webhookEventSignal } from '../../src/workflows/definitions';
import type { RouteOptions, RouteSummary } from '../../src/workflows/webhook-route';
import { makeEvent, quietBundlerLogger, testSubscriberActivities } from './bridge-fixtures';
import type { SubscriberState } from './bridge.workflows';

/**
 * The route workflow's own guarantees, driven through the same sink and subscribe calls the bridge and the submit activity use, on a
 * real dev server (the expiry timers are a second or two of real time; no test has to beat one).
 */

const TASK_QUEUE = `route-${randomUUID()}`;
/**
 * Lifetimes: tests that wait for a route to end by itself use the short one (they wait for
 * it, nothing has to beat it); every other test uses the long one, so no step of theirs races a timer.
 */
const TTL_MS = 1_500;
const LONG_TTL_MS = 10 * 60_000;

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let worker: Worker;
let workerRun: Promise<void>;
let sink: EventSink;
let expiringSink: EventSink;
const routed: RouteDelivery[] = [];

beforeAll(async () => {
  bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./bridge.workflows'),
    logger: quietBundlerLogger(),
  });
  env = await startDevServer();
  const activities = testSubscriberActivities(env.client, TASK_QUEUE, { ttlMs: LONG_TTL_MS });
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowBundle: bundle,
    activities,
  });
  workerRun = worker.run();
  sink = createTemporalSink({
    client: env.client,
    taskQueue: TASK_QUEUE,
    rendezvous: { ttlMs: LONG_TTL_MS },
    onRouted: (how) => routed.push(how),
  });
  expiringSink = createTemporalSink({
    client: env.client,
    taskQueue: TASK_QUEUE,
    rendezvous: { ttlMs: TTL_MS },
    onRouted: (how) => routed.push(how),
  });
});

afterAll(async () => {
  worker?.shutdown();
  await workerRun;
  await env?.teardown();
});

async function eventually(probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i += 1) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('timed out');
}

const route = (requestId: string) =>
  env.client.workflow.getHandle<() => Promise<RouteSummary>>(routeWorkflowId(requestId));

function startSubscriber(requestIds: string[], options: { subscribe: boolean; stayOpen?: boolean }) {
  return env.client.workflow.start('testSubscriberWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: `subscriber/${randomUUID()}`,
    args: [requestIds, options],
  });
}

describe('webhook route workflow', () => {
  it('parks a delivery nobody subscribes to and ends by itself after its ttl', async () => {
    const event = makeEvent();
    await expiringSink.deliver(event);
    expect(routed[routed.length - 1]).toBe('parked');
    const summary = await route(event.request_id).result();
    expect(summary).toMatchObject({ endedBecause: 'expired_unsubscribed', subscriber: null });
    expect(summary.events.map((e) => e.event_id)).toEqual([event.event_id]);
    // A late retry of the same delivery is not parked again (no one will ever collect it).
    await expiringSink.deliver(event);
    expect(routed[routed.length - 1]).toBe('late');
  });

  it('the subscriber started first: the route closes at once and every event goes straight to the subscriber', async () => {
    const requestId = `req-${randomUUID()}`;
    const progress = makeEvent({
      request_id: requestId,
      event_type: 'generation.progress',
      data: { status: 'IN_PROGRESS' },
    });
    const done = makeEvent({ request_id: requestId });
    const subscriber = await startSubscriber([requestId], { subscribe: true });
    await eventually(() =>
      route(requestId)
        .describe()
        .then(
          (d) => d.memo?.subscriber === subscriber.workflowId,
          () => false,
        ),
    );
    expect(await route(requestId).result()).toMatchObject({
      endedBecause: 'handed_over',
      subscriber: subscriber.workflowId,
      events: [],
    });
    await sink.deliver(progress);
    await sink.deliver(done);
    expect(routed.slice(-2)).toEqual(['direct', 'direct']);
    const state = (await subscriber.result()) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([progress.event_id, done.event_id]);
  });

  it('non-terminal and terminal events that came first are handed over with the subscription, in order', async () => {
    const requestId = `req-${randomUUID()}`;
    const progress = makeEvent({
      request_id: requestId,
      event_type: 'generation.progress',
      data: { status: 'IN_PROGRESS' },
    });
    const failed = makeEvent({
      request_id: requestId,
      event_type: 'generation.failed',
      status: 'ERROR',
      data: null,
      error: { code: 'x', message: 'y' },
    });
    await sink.deliver(progress);
    await sink.deliver(failed);
    await sink.deliver(failed);
    const subscriber = await startSubscriber([requestId], { subscribe: true });
    const state = (await subscriber.result()) as SubscriberState;
    expect(state.events.map((e) => e.event_id)).toEqual([progress.event_id, failed.event_id]);
    expect(state.handedOver).toBe(2);
    expect(await route(requestId).result()).toMatchObject({ endedBecause: 'handed_over', duplicatesIgnored: 1 });
  });

  it('a repeated subscription (activity retry after the route closed) gets the parked events again from its result', async () => {
    const event = makeEvent();
    await sink.deliver(event);
    const subscriber = `subscriber/${randomUUID()}`;
    const first = await subscribeToRoute({ client: env.client, taskQueue: TASK_QUEUE }, event.request_id, subscriber);
    await route(event.request_id).result();
    const again = await subscribeToRoute({ client: env.client, taskQueue: TASK_QUEUE }, event.request_id, subscriber);
    expect([first.map((e) => e.event_id), again.map((e) => e.event_id)]).toEqual([[event.event_id], [event.event_id]]);
  });

  it('a subscriber that does not exist is dropped instead of failing or looping', async () => {
    const event = makeEvent();
    // A route that names its subscriber and holds an event forwards it by signal; the signal fails.
    const options: RouteOptions = { subscriber: 'no-such-workflow', ttlMs: LONG_TTL_MS };
    await env.client.workflow.signalWithStart(ROUTE_WORKFLOW_TYPE, {
      workflowId: routeWorkflowId(event.request_id),
      taskQueue: TASK_QUEUE,
      args: [event.request_id, options],
      signal: webhookEventSignal,
      signalArgs: [event],
    });
    expect(await route(event.request_id).result()).toMatchObject({
      endedBecause: 'subscriber_gone',
      subscriber: 'no-such-workflow',
    });
  });
});
