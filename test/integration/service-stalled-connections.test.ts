import { TEST_API_KEY, tempDataDir } from '../helpers/local-service';
import {
  holdStalledPosts,
  keepCalling,
  onFreshConnection,
  openAfter,
  startLimitedProcess,
  type LimitedProcess,
} from '../helpers/stalled-connections';

/**
 * The local service's API allowed 256 open files, against 300 connections that POST to a queue
 * endpoint without a key, sending headers and one body byte and then holding: requests with the key,
 * each on a connection of its own, are answered all along, and the server closes every stalled
 * connection within 15 s.
 */

const STALLED = 300;
let service: LimitedProcess | undefined;

afterAll(async () => {
  await service?.stop();
});

it('keeps answering keyed requests while 300 stalled queue POSTs hold, and closes them all', async () => {
  service = await startLimitedProcess('local-service', {
    REELFLOW_SERVICE_HOST: '127.0.0.1',
    REELFLOW_SERVICE_PORT: '0',
    REELFLOW_SERVICE_DATA_DIR: tempDataDir('service-stalled-'),
    REELFLOW_SERVICE_API_KEYS: TEST_API_KEY,
  });
  const held = await holdStalledPosts(`${service.url}/v1/queue/service-upscale-video-fast`, STALLED);

  const call = () =>
    onFreshConnection(`${service!.url}/v1/pricing/quote`, {
      method: 'POST',
      headers: { authorization: `Key ${TEST_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'service-upscale-video-fast', input: {} }),
    });
  const results = await keepCalling(call, held, {
    until: () => held.every((connection) => connection.closedAt !== undefined),
    after: 5,
    maxAttempts: 2_000,
  });
  const stillOpen = await openAfter(held, 1_000);

  // Every keyed request was answered by the service (its own verdict on the quote, not a reset),
  // the first ones while dozens of stalled connections held.
  const unanswered = results.filter((result) => typeof result.outcome !== 'number' || result.outcome >= 500);
  expect({ unanswered: unanswered.length, first: unanswered.slice(0, 3) }).toEqual({ unanswered: 0, first: [] });
  // (At 256 open files the default caps hold 144 connections, 108 from one address.)
  expect(results[0]!.heldOpen).toBeGreaterThanOrEqual(50);
  // The server closed every stalled connection (this side never did), each within 15 s of its opening.
  expect(stillOpen).toHaveLength(0);
  const slowest = Math.max(...held.map((connection) => connection.closedAt! - connection.openedAt));
  expect(slowest).toBeLessThanOrEqual(15_000);
  expect(await service.stop()).toBe(0);
  service = undefined;
}, 90_000);
