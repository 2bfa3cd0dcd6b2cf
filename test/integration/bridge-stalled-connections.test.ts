import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { makeEvent, signFor } from './bridge-fixtures';
import {
  holdStalledPosts,
  keepCalling,
  onFreshConnection,
  openAfter,
  startLimitedProcess,
  type LimitedProcess,
} from '../helpers/stalled-connections';

/**
 * A standalone bridge allowed 256 open files, against 300 connections that send POST headers and
 * one body byte and then hold, without a key: signed deliveries, each on a connection of its own,
 * are acknowledged (202) all along, and the server closes every stalled connection within 15 s
 * (the requirement; the service gives up on a delivery after 10 s).
 */

const SECRET = 'whsec_stalled_0123456789';
const STALLED = 300;
let bridge: LimitedProcess | undefined;

/** A port nothing listens on: the bridge acknowledges into its inbox; its forwarder just retries. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

afterAll(async () => {
  await bridge?.stop();
});

it('keeps acknowledging signed deliveries while 300 stalled connections hold, and closes them all', async () => {
  bridge = await startLimitedProcess('bridge', {
    REELFLOW_WEBHOOK_SECRETS: SECRET,
    TEMPORAL_ADDRESS: `127.0.0.1:${await closedPort()}`,
    REELFLOW_BRIDGE_HOST: '127.0.0.1',
    REELFLOW_BRIDGE_PORT: '0',
    REELFLOW_BRIDGE_METRICS_PORT: '0',
    REELFLOW_STATE_DIR: mkdtempSync(join(tmpdir(), 'bridge-stalled-')),
    REELFLOW_LOG_LEVEL: 'error',
  });
  const held = await holdStalledPosts(bridge.url, STALLED, {
    'webhook-id': 'evt_stalled',
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': 'v1,AAAA',
  });

  const deliver = () => {
    const event = makeEvent();
    const body = JSON.stringify(event);
    return onFreshConnection(bridge!.url, {
      method: 'POST',
      headers: signFor(body, { id: event.event_id, secrets: [SECRET] }),
      body,
    });
  };
  const results = await keepCalling(deliver, held, {
    until: () => held.every((connection) => connection.closedAt !== undefined),
    after: 5,
    maxAttempts: 2_000,
  });
  const stillOpen = await openAfter(held, 1_000);

  // Every delivery was acknowledged, the first ones while dozens of stalled connections held.
  const failed = results.filter((result) => result.outcome !== 202);
  expect({ failed: failed.length, first: failed.slice(0, 3) }).toEqual({ failed: 0, first: [] });
  // (At 256 open files the default caps hold 144 connections, 108 from one address.)
  expect(results[0]!.heldOpen).toBeGreaterThanOrEqual(50);
  // The server closed every stalled connection (this side never did), each within 15 s of its opening.
  expect(stillOpen).toHaveLength(0);
  const slowest = Math.max(...held.map((connection) => connection.closedAt! - connection.openedAt));
  expect(slowest).toBeLessThanOrEqual(15_000);

  // Its metrics, on their own port (the webhook port has no /metrics), count the closes by reason.
  expect(await onFreshConnection(bridge.url.replace(/\/webhooks$/, '/metrics'), { method: 'GET' })).toBe(404);
  const metrics = await (await request(bridge.metricsUrl()!)).body.text();
  const closed = [...metrics.matchAll(/^reelflow_bridge_connections_closed_total\{reason="(\w+)"\} (\d+)$/gm)];
  expect(closed.reduce((sum, match) => sum + Number(match[2]), 0)).toBeGreaterThan(0);
  expect(await bridge.stop()).toBe(0);
  bridge = undefined;
}, 90_000);
