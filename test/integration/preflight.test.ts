import * as fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import {
  createPreflightActivities,
  type PreflightFailureDetails,
  type PreflightOptions,
} from '../../src/activities/preflight';
import { createActivities } from '../../src/activities';
import { createServiceClient } from '../../src/client/service-client';
import { FAILURE_TYPES } from '../../src/contract/failure-types';
import { pipeline } from '../../src/pipeline-spec';
import { runFfmpeg } from '../../src/media/ffmpeg';
import { dnsTable } from '../helpers/dns-table';
import { silentWavDataUri } from './workflow-harness';

/**
 * The preflight activity against a real HTTP server on loopback. DNS is outside the machine, so a
 * resolver table stands in for it: `media.example.test` resolves to 127.0.0.1, which the rules
 * treat as public for this test (every other address class keeps its default treatment), and any
 * other name does not resolve. Clip lengths come from real ffprobe runs on real ffmpeg output.
 */

const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples', 'media');
const LONG_FORM = 'service-video-cinema-long-form-from-references';
let server: Server;
let base: string;
let dir: string;
let longClip: Buffer;
const requests: Array<{ url: string; range: string | undefined }> = [];

/** Routes: /<name>?type=<content type>&status=<code>&norange=1&total=<declared size>. */
function serve(file: (name: string) => Buffer | null) {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ url: url.pathname, range: req.headers.range });
    const status = Number(url.searchParams.get('status') ?? 200);
    if (status !== 200) return res.writeHead(status).end();
    const body = file(url.pathname.slice(1));
    if (!body) return res.writeHead(404).end();
    const type = url.searchParams.get('type');
    const headers: Record<string, string> = type ? { 'content-type': type } : {};
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (range && !url.searchParams.has('norange')) {
      const end = Math.min(Number(range[2]), body.length - 1);
      const total = url.searchParams.get('total') ?? String(body.length);
      res.writeHead(206, { ...headers, 'content-range': `bytes 0-${end}/${total}`, 'content-length': String(end + 1) });
      return res.end(body.subarray(0, end + 1));
    }
    res.writeHead(200, { ...headers, 'content-length': String(body.length) });
    return res.end(body);
  });
}

const files: Record<string, () => Buffer> = {
  'hero.png': () => fs.readFileSync(path.join(EXAMPLES, 'hero.png')),
  'voice.m4a': () => fs.readFileSync(path.join(EXAMPLES, 'voice-over.m4a')),
  'clip.mp4': () => fs.readFileSync(path.join(EXAMPLES, 'clip.mp4')),
  'long.mp4': () => longClip,
  'page.html': () => Buffer.from('<html>not media</html>'),
};

function options(extra: Partial<PreflightOptions> = {}): PreflightOptions {
  return {
    lookup: dnsTable({ 'media.example.test': ['127.0.0.1'], 'private.example.test': ['10.0.0.7'] }),
    // Loopback stands in for public space, on the test server's port, over http.
    rules: { allowedClasses: ['public', 'loopback'], ports: 'any', schemes: ['https:', 'http:'] },
    timeoutMs: 3_000,
    ...extra,
  };
}

/** Runs the activity and returns the failure it threw (or fails the test). */
async function refusal(
  model: Parameters<ReturnType<typeof createPreflightActivities>['preflightJob']>[0],
  input: Record<string, unknown>,
  extra: Partial<PreflightOptions> = {},
) {
  const error = await createPreflightActivities(options(extra))
    .preflightJob(model, input)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-preflight-'));
  // An 11-minute clip (tiny frames, 1 fps) with its index at the front, as a streaming server has it.
  const long = path.join(dir, 'long.mp4');
  await runFfmpeg([
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=64x64:rate=1:duration=660',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-movflags',
    '+faststart',
    long,
  ]);
  longClip = fs.readFileSync(long);
  server = serve((name) => files[name]?.() ?? null);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://media.example.test:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('preflight activity', () => {
  it('passes fitting inputs, reading only their first bytes with a ranged GET', async () => {
    requests.length = 0;
    const report = await createPreflightActivities(options()).preflightJob('service-horizon-studio', {
      video_url: `${base}/clip.mp4?type=video/mp4`,
      audio_url: `${base}/voice.m4a?type=application/octet-stream`,
    });
    expect(report.checks.map((c) => [c.path, c.source, c.contentType])).toEqual([
      ['audio_url', 'url', 'audio/mp4'],
      ['video_url', 'url', 'video/mp4'],
    ]);
    const clip = report.checks.find((c) => c.path === 'video_url');
    expect(clip?.durationSeconds).toBeCloseTo(4, 0);
    expect(clip?.size).toBe(fs.statSync(path.join(EXAMPLES, 'clip.mp4')).size);
    expect(requests.every((r) => r.range?.startsWith('bytes=0-'))).toBe(true);
  });

  it('refuses a host that does not resolve, naming the field and the reason, and keeps checking the rest', async () => {
    const failure = await refusal(LONG_FORM, {
      image_urls: [`${base}/hero.png?type=image/png`, 'https://example.com/reelflow/product.png'],
      prompt: 'x',
    });
    expect(failure.type).toBe(FAILURE_TYPES.preflightRefused);
    expect(failure.nonRetryable).toBe(true);
    const details = failure.details?.[0] as PreflightFailureDetails;
    expect(details.problems).toEqual([
      { path: 'image_urls.1', message: 'host example.com does not resolve (ENOTFOUND)' },
    ]);
    expect(details.checks.map((c) => c.path)).toEqual(['image_urls.0']);
    expect(failure.message).toContain('image_urls.1: host example.com does not resolve (ENOTFOUND)');
  });

  it('refuses a media type that does not fit the parameter, a missing file and a private address', async () => {
    const failure = await refusal(LONG_FORM, {
      image_urls: [`${base}/page.html?type=text/html`, `${base}/nothing.png`, `https://private.example.test/a.png`],
      audio_urls: [`${base}/hero.png?type=image/png`],
    });
    expect((failure.details?.[0] as PreflightFailureDetails).problems).toEqual([
      { path: 'image_urls.0', message: 'is text/html, not an image file' },
      { path: 'image_urls.1', message: 'answered HTTP 404' },
      { path: 'image_urls.2', message: 'host private.example.test resolves to 10.0.0.7, a private address' },
      { path: 'audio_urls.0', message: 'is image/png, not an audio file' },
    ]);
  });

  it('refuses a re-voicing clip over 10 minutes (ffprobe of the first bytes) and a file over the size limit', async () => {
    // Only the first 32 KiB are read: the clip is longer than that, its index is at the front.
    expect(longClip.length).toBeGreaterThan(4 * 32 * 1024);
    const long = await refusal(
      'service-horizon-studio',
      { video_url: `${base}/long.mp4?type=video/mp4`, audio_url: silentWavDataUri(1) },
      { clipHeadBytes: 32 * 1024 },
    );
    expect((long.details?.[0] as PreflightFailureDetails).problems).toEqual([
      {
        path: 'video_url',
        message: expect.stringMatching(/^is a 66\d\.\d s clip, longer than the 10 minutes re-voicing accepts$/),
      },
    ]);
    const huge = await refusal('service-upscale-video-fast', {
      video_url: `${base}/clip.mp4?type=video/mp4&total=999999999999`,
    });
    expect((huge.details?.[0] as PreflightFailureDetails).problems[0]?.message).toMatch(
      /^is 999999999999 bytes, more than the \d+ an input file may have$/,
    );
  });

  it('checks data URIs (type and clip length) without any request, and servers that ignore Range', async () => {
    requests.length = 0;
    const clip = `data:video/mp4;base64,${fs.readFileSync(path.join(EXAMPLES, 'clip.mp4')).toString('base64')}`;
    const report = await createPreflightActivities(options()).preflightJob('service-horizon-studio', {
      video_url: clip,
      audio_url: silentWavDataUri(1),
    });
    expect(report.checks.map((c) => [c.source, c.contentType])).toEqual([
      ['data-uri', 'audio/wav'],
      ['data-uri', 'video/mp4'],
    ]);
    expect(report.checks[1]?.durationSeconds).toBeCloseTo(4, 0);
    expect(requests).toEqual([]);
    const wrong = await refusal(LONG_FORM, { image_urls: [silentWavDataUri(1)] });
    expect((wrong.details?.[0] as PreflightFailureDetails).problems).toEqual([
      { path: 'image_urls.0', message: 'is audio/wav, not an image file' },
    ]);
    const plain = await createPreflightActivities(options()).preflightJob('service-upscale-video-fast', {
      video_url: `${base}/clip.mp4?type=video/mp4&norange=1`,
    });
    expect(plain.checks[0]?.size).toBe(fs.statSync(path.join(EXAMPLES, 'clip.mp4')).size);
  });

  it('reads the configured service’s own http output URLs, and only those, with private addresses allowed', async () => {
    const own = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const strict: Partial<PreflightOptions> = { rules: {} };
    const refused = await refusal(
      'service-upscale-video-fast',
      { video_url: `${own}/clip.mp4?type=video/mp4` },
      strict,
    );
    expect((refused.details?.[0] as PreflightFailureDetails).problems[0]?.message).toMatch(
      /scheme http is not allowed/,
    );
    const report = await createPreflightActivities(options({ ...strict, trustedOrigins: [own] })).preflightJob(
      'service-upscale-video-fast',
      { video_url: `${own}/clip.mp4?type=video/mp4` },
    );
    expect(report.checks[0]?.contentType).toBe('video/mp4');
  });

  it('an answer that may change (503) is retryable, not a refusal; a missing store reference is refused', async () => {
    const busy = await refusal('service-upscale-video-fast', { video_url: `${base}/clip.mp4?status=503` });
    expect(busy.type).toBe(FAILURE_TYPES.preflightUnavailable);
    expect(busy.nonRetryable).toBe(false);
    expect(busy.message).toContain('video_url: answered HTTP 503');
    const references = { owns: (v: string) => v.startsWith('sha256:'), stat: async () => null };
    const missing = await refusal('service-upscale-video-fast', { video_url: 'sha256:abc' }, { references });
    expect((missing.details?.[0] as PreflightFailureDetails).problems).toEqual([
      { path: 'video_url', message: 'reference sha256:abc is not in the media store' },
    ]);
  });
});

describe('checkPipeline: validation and the preflight of the asked steps, one local activity', () => {
  const rules = () => ({ allowedOrigins: [base] });
  const spec = (videoUrl: string) =>
    pipeline('checks').step('upscale', 'service-upscale-video-fast', { video_url: videoUrl }).build(rules());
  async function check(specValue: unknown, steps: number[], idempotency?: 'honoured' | 'unknown') {
    const client = createServiceClient({ baseUrl: base, apiKey: 'unused', ...(idempotency ? { idempotency } : {}) });
    try {
      const activities = createActivities({ client, routes: { subscribe: async () => [] }, preflight: options() });
      return await activities.checkPipeline(specValue, rules(), steps);
    } finally {
      await client.close();
    }
  }

  it('answers a spec the contract refuses with its field errors, before any input is read', async () => {
    const before = requests.length;
    const checked = await check({ ...spec(`${base}/clip.mp4?type=video/mp4`), name: 'not a name!' }, [0]);
    expect(checked).toMatchObject({ ok: false, errors: [expect.objectContaining({ path: 'name' })] });
    expect(requests.length).toBe(before);
  });

  it('answers a refusal with its step; an input that stays unavailable is read three times, then refused', async () => {
    const refused = await check(spec(`${base}/page.html?type=text/html`), [0]);
    expect(refused).toMatchObject({ ok: true, refused: [{ index: 0, problems: [{ path: 'video_url' }] }] });
    const before = requests.length;
    const busy = await check(spec(`${base}/clip.mp4?status=503`), [0]);
    expect(busy).toMatchObject({ ok: true, refused: [{ index: 0, problems: [{ path: '(input)' }] }] });
    expect(requests.slice(before).filter((r) => r.url === '/clip.mp4')).toHaveLength(3);
    // A step not asked for (`preflight: false`) is not read.
    expect(await check(spec(`${base}/clip.mp4?status=503`), [])).toMatchObject({ ok: true, refused: [] });
  }, 20_000);

  it('runs the submits as local activities only for a client whose service honours Idempotency-Key', async () => {
    const passing = spec(`${base}/clip.mp4?type=video/mp4`);
    expect(await check(passing, [0], 'honoured')).toMatchObject({ ok: true, submitAs: 'local-activity' });
    expect(await check(passing, [0], 'unknown')).toMatchObject({ ok: true, submitAs: 'activity' });
  });
});
