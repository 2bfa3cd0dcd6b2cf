import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { runFfmpeg } from '../../src/media/ffmpeg';
import { QuoteLimiter } from '../../src/local-service/http/quote-limiter';
import { ServiceProblem } from '../../src/local-service/http/errors';
import { createFfmpegModelRunner } from '../../src/local-service/media/runner';
import {
  LONG_FORM,
  PIXEL_PNG,
  startTestService,
  waitForStatus,
  waitUntil,
  type TestService,
} from '../helpers/local-service';

/**
 * The price is measured on the bytes that are rendered: an input server that swaps a short clip
 * for a long one after the first download is fetched once, and the render is the short clip.
 * Quotes are rate-limited per key (429 with Retry-After) and bounded in concurrency.
 */

let workDir: string;
let svc: TestService | null = null;
let server: http.Server | null = null;

beforeAll(() => {
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-pricing-'));
});
afterEach(async () => {
  await svc?.close();
  svc = null;
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = null;
  }
});
afterAll(() => fs.rmSync(workDir, { recursive: true, force: true }));

async function clip(name: string, seconds: number): Promise<Buffer> {
  const file = path.join(workDir, name);
  await runFfmpeg([
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=96x64:rate=10',
    '-t',
    String(seconds),
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    file,
  ]);
  return fs.readFileSync(file);
}

test('a clip swapped after its first download is priced and rendered from the same bytes, fetched once', async () => {
  const [short, long] = [await clip('short.mp4', 1), await clip('long.mp4', 6)];
  const gets: string[] = [];
  server = http.createServer((req, res) => {
    gets.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'video/mp4' }).end(gets.length === 1 ? short : long);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  // Plain http on loopback needs the local-use switch (the contract asks https of real inputs).
  const clipUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/clip.mp4`;
  const runner = createFfmpegModelRunner({
    allowPrivate: true,
    ownOrigin: 'http://127.0.0.1:1',
    ownFilesDir: path.join(workDir, 'files'),
  });
  const keep = path.join(workDir, 'inputs', 'job-1');
  const seconds = await runner.billedSeconds('service-upscale-video-fast', { video_url: clipUrl }, keep);
  expect(seconds).toBeCloseTo(1, 0);
  const rendered = await runner.render({
    model: 'service-upscale-video-fast',
    input: { video_url: clipUrl },
    requestId: 'job-1',
    outputDir: path.join(workDir, 'files', 'job-1'),
    prefetchedDir: keep,
    signal: new AbortController().signal,
  });
  expect(gets).toEqual(['/clip.mp4']);
  expect(rendered.outputSeconds).toBeGreaterThan(0.5);
  expect(rendered.outputSeconds).toBeLessThan(2);
  // Without the kept file the render fetches again, and gets the long clip: the swap is real.
  const again = await runner.render({
    model: 'service-upscale-video-fast',
    input: { video_url: clipUrl },
    requestId: 'job-2',
    outputDir: path.join(workDir, 'files', 'job-2'),
    signal: new AbortController().signal,
  });
  expect(gets).toHaveLength(2);
  expect(again.outputSeconds).toBeGreaterThan(5);
});

test('a submit keeps the priced clip for its render and drops it with the finished job', async () => {
  svc = await startTestService();
  const data = `data:video/mp4;base64,${(await clip('data.mp4', 1)).toString('base64')}`;
  const submitted = await svc.call('POST', '/v1/queue/service-upscale-video-fast', { body: { video_url: data } });
  expect(submitted.status).toBe(202);
  const id = submitted.body.request_id as string;
  await waitForStatus(svc.url, id, (s) => s === 'COMPLETED' || s === 'FAILED');
  expect(svc.service.jobs().find((j) => j.id === id)?.status).toBe('COMPLETED');
  const charge = svc.service.ledger().find((e) => e.requestId === id && e.kind === 'charge')!;
  const quote = await svc.call('POST', '/v1/pricing/quote', {
    body: { model: 'service-upscale-video-fast', input: { video_url: data } },
  });
  expect(-charge.amount).toBe(quote.body.credits);
  await waitUntil(
    () => !fs.existsSync(path.join(svc!.dataDir, 'inputs', id)),
    5_000,
    'the inputs of the finished job to go',
  );
  expect(fs.readdirSync(path.join(svc.dataDir, 'inputs'))).toEqual([]);
});

test('quotes beyond the per-key rate get 429 with Retry-After; the limit does not touch submits', async () => {
  svc = await startTestService({ quoteLimits: { perMinute: 6, burst: 2 } });
  const body = { model: LONG_FORM, input: { image_urls: [PIXEL_PNG] } };
  expect((await svc.call('POST', '/v1/pricing/quote', { body })).status).toBe(200);
  expect((await svc.call('POST', '/v1/pricing/quote', { body })).status).toBe(200);
  const limited = await svc.call('POST', '/v1/pricing/quote', { body });
  expect(limited.status).toBe(429);
  expect(limited.body.code).toBe('rate_limited');
  expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(10);
  // A malformed quote is refused before admission and costs nothing.
  expect((await svc.call('POST', '/v1/pricing/quote', { body: { model: LONG_FORM, input: {} } })).status).toBe(422);
  expect((await svc.call('POST', `/v1/queue/${LONG_FORM}`, { body: body.input })).status).toBe(202);
});

test('the limiter refills with time and bounds quotes in progress across keys', () => {
  let now = 0;
  const limiter = new QuoteLimiter({ perMinute: 60, burst: 2, concurrency: 2 }, () => now);
  const a1 = limiter.admit('a');
  const b1 = limiter.admit('b');
  // Two in progress: a third is refused whoever asks, with Retry-After 1.
  const busy = (() => {
    try {
      limiter.admit('c');
      return null;
    } catch (error) {
      return error as ServiceProblem;
    }
  })();
  expect(busy?.code).toBe('rate_limited');
  expect(busy?.extras.retryAfterSeconds).toBe(1);
  a1();
  b1();
  limiter.admit('a')();
  let refused: ServiceProblem | null = null;
  try {
    limiter.admit('a');
  } catch (error) {
    refused = error as ServiceProblem;
  }
  expect(refused?.extras.retryAfterSeconds).toBe(1);
  now += 1_000;
  expect(() => limiter.admit('a')()).not.toThrow();
});
