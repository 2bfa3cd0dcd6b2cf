import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkWebhookUrl, safeFetch, SafeFetchError, type AddressRuleOptions, type LookupFn } from '../../src/net';
import { dnsTable } from '../helpers/dns-table';
import { runFfmpeg } from '../../src/media/ffmpeg';
import { createFfmpegModelRunner, MediaError } from '../../src/local-service/media/runner';

interface Seen {
  method: string;
  url: string;
  host: string | undefined;
}

let server: Server;
let port: number;
let workDir: string;
let png: Buffer;
let clip: Buffer;
const seen: Seen[] = [];

function route(req: IncomingMessage, res: ServerResponse): void {
  seen.push({ method: req.method ?? '', url: req.url ?? '', host: req.headers.host });
  const url = new URL(req.url ?? '/', 'http://placeholder');
  switch (url.pathname) {
    case '/ok':
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      return;
    case '/exact':
      res.writeHead(200, { 'content-length': '1000' }).end(Buffer.alloc(1000, 1));
      return;
    case '/big-declared':
      res.writeHead(200, { 'content-length': '2000' }).end(Buffer.alloc(2000, 1));
      return;
    case '/big-chunked':
      // No content-length: the limit must be enforced while streaming.
      res.writeHead(200);
      for (let i = 0; i < 10; i += 1) res.write(Buffer.alloc(500, 2));
      res.end();
      return;
    case '/slow':
      // Never answers; only the client's deadline ends the exchange.
      return;
    case '/missing':
      res.writeHead(404).end('no');
      return;
    case '/redir':
      res.writeHead(302, { location: url.searchParams.get('next') ?? '/ok' }).end();
      return;
    case '/post-only':
      if (req.method === 'HEAD') res.writeHead(405).end();
      else res.writeHead(307, { location: url.searchParams.get('next') ?? '/ok' }).end();
      return;
    case '/image.png':
      res.writeHead(200, { 'content-type': 'image/png' }).end(png);
      return;
    case '/clip.mp4':
      res.writeHead(200, { 'content-type': 'video/mp4' }).end(clip);
      return;
    default:
      res.writeHead(200).end('hook');
  }
}

/** A chain of redirects through the given base URLs, ending at `final`. */
function chain(bases: string[], final: string): string {
  return bases.reduceRight((next, base) => `${base}/redir?next=${encodeURIComponent(next)}`, final);
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'reelflow-safe-fetch-'));
  await runFfmpeg([
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=160x120:rate=1',
    '-frames:v',
    '1',
    join(workDir, 'in.png'),
  ]);
  await runFfmpeg([
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=64x48:rate=10',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440',
    '-t',
    '2',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    join(workDir, 'clip.mp4'),
  ]);
  png = await readFile(join(workDir, 'in.png'));
  clip = await readFile(join(workDir, 'clip.mp4'));
  server = createServer(route);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(workDir, { recursive: true, force: true });
});

/**
 * The trick that lets loopback servers play public hosts. Under the default rules a name must
 * resolve to public space and use https on 443/8443, which a test on one machine cannot serve.
 * So the injected resolver maps the "public" names (cdn.example, hopN.example) to 127.0.0.1, and
 * these options admit exactly one extra class, `loopback`, plus http on any port. Every other
 * class keeps its default treatment, so a hop whose name resolves to 10.0.0.8 (private) or
 * 169.254.169.254 (metadata) is refused exactly as it would be in production. The service itself
 * never passes these overrides.
 */
function loopbackAsPublic(lookup: LookupFn): AddressRuleOptions {
  return { allowPrivate: false, schemes: ['http:'], ports: 'any', allowedClasses: ['public', 'loopback'], lookup };
}

function names(): LookupFn & { calls: string[] } {
  return dnsTable({
    'cdn.example': ['127.0.0.1'],
    'hop1.example': ['127.0.0.1'],
    'hop2.example': ['127.0.0.1'],
    'hop3.example': ['127.0.0.1'],
    'hop4.example': ['127.0.0.1'],
    'internal.example': ['10.0.0.8'],
    'metadata.example': ['169.254.169.254'],
  });
}

const base = (host: string): string => `http://${host}:${port}`;

async function fetchError(promise: Promise<unknown>): Promise<SafeFetchError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SafeFetchError);
  return error as SafeFetchError;
}

describe('safeFetch', () => {
  it('connects to the validated address only, keeping the host name in the request', async () => {
    const lookup = names();
    const result = await safeFetch(`${base('cdn.example')}/ok`, {
      ...loopbackAsPublic(lookup),
      maxBytes: 100,
      timeoutMs: 10_000,
    });
    expect(result.body.toString()).toBe('hello');
    expect(result.contentType).toBe('text/plain');
    expect(seen.at(-1)?.host).toBe(`cdn.example:${port}`);
    expect(lookup.calls).toEqual(['cdn.example']);
  });

  it('is not fooled by DNS rebinding: the second answer is never used', async () => {
    // First answer passes the rules; every later answer points inside. The name does not exist in
    // real DNS either, so the fetch only succeeds if the connection used the pinned first answer.
    const answers = ['127.0.0.1', '10.0.0.8'];
    const calls: string[] = [];
    const rebinding: LookupFn = async (hostname) => {
      calls.push(hostname);
      const address = answers[Math.min(calls.length - 1, 1)] as string;
      return [{ address, family: 4 }];
    };
    const result = await safeFetch(`${base('rebind.example')}/ok`, {
      ...loopbackAsPublic(rebinding),
      maxBytes: 100,
      timeoutMs: 10_000,
    });
    expect(result.body.toString()).toBe('hello');
    expect(calls).toEqual(['rebind.example']);
  });

  it('accepts a body of exactly maxBytes and refuses a larger one, declared or streamed', async () => {
    const rules = { ...loopbackAsPublic(names()), maxBytes: 1000, timeoutMs: 10_000 };
    await expect(safeFetch(`${base('cdn.example')}/exact`, rules)).resolves.toMatchObject({ size: 1000 });
    expect((await fetchError(safeFetch(`${base('cdn.example')}/big-declared`, rules))).code).toBe('too_large');
    expect((await fetchError(safeFetch(`${base('cdn.example')}/big-chunked`, rules))).code).toBe('too_large');
  });

  it('gives up at the deadline', async () => {
    const error = await fetchError(
      safeFetch(`${base('cdn.example')}/slow`, { ...loopbackAsPublic(names()), maxBytes: 100, timeoutMs: 300 }),
    );
    expect(error.code).toBe('timeout');
  });

  it('stops when the caller aborts, with the abort reason', async () => {
    const controller = new AbortController();
    const pending = safeFetch(`${base('cdn.example')}/slow`, {
      ...loopbackAsPublic(names()),
      maxBytes: 100,
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    const reason = new Error('job cancelled');
    setImmediate(() => controller.abort(reason));
    await expect(pending).rejects.toBe(reason);
  });

  it('reports an HTTP error status', async () => {
    const error = await fetchError(
      safeFetch(`${base('cdn.example')}/missing`, { ...loopbackAsPublic(names()), maxBytes: 100, timeoutMs: 10_000 }),
    );
    expect(error).toMatchObject({ code: 'http_status', status: 404 });
  });

  it('follows up to 3 redirects, validating every hop', async () => {
    const lookup = names();
    const url = chain([base('hop1.example'), base('hop2.example'), base('hop3.example')], `${base('cdn.example')}/ok`);
    const result = await safeFetch(url, { ...loopbackAsPublic(lookup), maxBytes: 100, timeoutMs: 10_000 });
    expect(result.body.toString()).toBe('hello');
    expect(result.url).toBe(`${base('cdn.example')}/ok`);
    expect(lookup.calls).toEqual(['hop1.example', 'hop2.example', 'hop3.example', 'cdn.example']);
  });

  it('refuses a 4th redirect', async () => {
    const url = chain(
      [base('hop1.example'), base('hop2.example'), base('hop3.example'), base('hop4.example')],
      `${base('cdn.example')}/ok`,
    );
    const error = await fetchError(safeFetch(url, { ...loopbackAsPublic(names()), maxBytes: 100, timeoutMs: 10_000 }));
    expect(error.code).toBe('too_many_redirects');
  });

  it.each([
    [
      'a name that resolves to a private address',
      'http://internal.example/secret',
      /redirect 1 refused: .*10\.0\.0\.8, a private address/,
    ],
    ['a metadata address', 'http://169.254.169.254/latest/meta-data/', /redirect 1 refused: .*metadata/],
    ['an IPv4-mapped private address', 'http://[::ffff:10.0.0.8]/', /redirect 1 refused: .*private/],
    ['credentials', 'http://user:pw@cdn.example/ok', /redirect 1 refused: .*credentials/],
    ['an invalid Location', 'http://[::1/', /redirect 1 has an invalid Location/],
  ])('refuses a redirect to %s without connecting to it', async (_name, target, reason) => {
    const before = seen.length;
    const error = await fetchError(
      safeFetch(`${base('hop1.example')}/redir?next=${encodeURIComponent(target)}`, {
        ...loopbackAsPublic(names()),
        maxBytes: 100,
        timeoutMs: 10_000,
      }),
    );
    expect(error.code).toBe('refused');
    expect(error.message).toMatch(reason);
    expect(seen.length - before).toBe(1); // only the first hop was contacted
  });

  it('refuses loopback and http under the default rules', async () => {
    const error = await fetchError(
      safeFetch(`http://127.0.0.1:${port}/ok`, { allowPrivate: false, maxBytes: 100, timeoutMs: 10_000 }),
    );
    expect(error.code).toBe('refused');
    expect(error.message).toMatch(/scheme http/);
    const https = await fetchError(
      safeFetch('https://127.0.0.1/ok', { allowPrivate: false, maxBytes: 100, timeoutMs: 10_000 }),
    );
    expect(https.message).toMatch(/loopback/);
    const named = await fetchError(
      safeFetch('https://localhost/ok', {
        allowPrivate: false,
        maxBytes: 100,
        timeoutMs: 10_000,
        lookup: dnsTable({ localhost: ['127.0.0.1', '::1'] }),
      }),
    );
    expect(named.message).toMatch(/host localhost resolves to 127\.0\.0\.1, a loopback address/);
  });

  it('allowPrivate reaches loopback but still refuses a redirect to cloud metadata', async () => {
    const dev = { allowPrivate: true, maxBytes: 100, timeoutMs: 10_000 };
    await expect(safeFetch(`http://127.0.0.1:${port}/ok`, dev)).resolves.toMatchObject({ status: 200 });
    const error = await fetchError(
      safeFetch(`http://127.0.0.1:${port}/redir?next=${encodeURIComponent('http://169.254.169.254/')}`, dev),
    );
    expect(error.message).toMatch(/metadata/);
  });
});

describe('checkWebhookUrl with a real redirect chain on loopback', () => {
  it('accepts a chain of 3 redirects through allowed hosts', async () => {
    const lookup = names();
    const url = chain(
      [base('hop1.example'), base('hop2.example'), base('hop3.example')],
      `${base('cdn.example')}/hook`,
    );
    await expect(checkWebhookUrl(url, loopbackAsPublic(lookup))).resolves.toEqual({ ok: true });
    expect(lookup.calls).toEqual(['hop1.example', 'hop2.example', 'hop3.example', 'cdn.example']);
  });

  it('refuses a chain whose third hop lands on a private address', async () => {
    const before = seen.length;
    const url = chain(
      [base('hop1.example'), base('hop2.example'), base('hop3.example')],
      'http://internal.example/hook',
    );
    const result = await checkWebhookUrl(url, loopbackAsPublic(names()));
    expect(result).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^redirect 3 to http:\/\/internal\.example\/hook refused: .*10\.0\.0\.8, a private address/,
      ),
    });
    // The three redirecting hops were probed with HEAD; the private one never was.
    expect(seen.slice(before).map((s) => [s.method, s.host])).toEqual([
      ['HEAD', `hop1.example:${port}`],
      ['HEAD', `hop2.example:${port}`],
      ['HEAD', `hop3.example:${port}`],
    ]);
  });

  it('refuses a third hop on a private IP literal, IPv4-mapped or not', async () => {
    for (const target of [
      'http://192.168.1.20/hook',
      'http://[::ffff:192.168.1.20]/hook',
      'http://169.254.169.254/hook',
    ]) {
      const url = chain([base('hop1.example'), base('hop2.example'), base('hop3.example')], target);
      await expect(checkWebhookUrl(url, loopbackAsPublic(names()))).resolves.toMatchObject({
        ok: false,
        reason: expect.stringMatching(/^redirect 3 /),
      });
    }
  });

  it('refuses more than 3 redirects', async () => {
    const url = chain(
      [base('hop1.example'), base('hop2.example'), base('hop3.example'), base('hop4.example')],
      `${base('cdn.example')}/hook`,
    );
    await expect(checkWebhookUrl(url, loopbackAsPublic(names()))).resolves.toEqual({
      ok: false,
      reason: 'more than 3 redirects',
    });
  });

  it('falls back to GET when HEAD is refused, and validates that redirect too', async () => {
    const url = `${base('hop1.example')}/post-only?next=${encodeURIComponent('http://metadata.example/')}`;
    const result = await checkWebhookUrl(url, loopbackAsPublic(names()));
    expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(/redirect 1 .*metadata/) });
  });

  it('under allowPrivate accepts loopback hops but never a metadata hop', async () => {
    const local = `http://127.0.0.1:${port}`;
    await expect(checkWebhookUrl(chain([local, local], `${local}/hook`), { allowPrivate: true })).resolves.toEqual({
      ok: true,
    });
    await expect(
      checkWebhookUrl(chain([local, local], 'http://169.254.169.254/hook'), { allowPrivate: true }),
    ).resolves.toMatchObject({
      ok: false,
      reason: expect.stringMatching(/redirect 2 .*metadata/),
    });
  });

  it('accepts an endpoint whose receiver is not up yet (its address passed the rules)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(checkWebhookUrl(`http://127.0.0.1:${closedPort}/hook`, { allowPrivate: true })).resolves.toEqual({
      ok: true,
    });
  });
});

describe('model runner input fetching', () => {
  const ownOrigin = 'http://127.0.0.1:1';
  const signal = (): AbortSignal => new AbortController().signal;

  it('refuses a loopback input URL under the default rules, naming the field', async () => {
    const runner = createFfmpegModelRunner({ allowPrivate: false, ownOrigin, ownFilesDir: workDir });
    const before = seen.length;
    for (const image of [`http://127.0.0.1:${port}/image.png`, `https://127.0.0.1:${port}/image.png`]) {
      const error = await runner
        .render({
          model: 'service-video-cinema-long-form-from-references',
          input: { image_urls: [`data:image/png;base64,${png.toString('base64')}`, image] },
          requestId: 'refused',
          outputDir: join(workDir, 'out-refused'),
          signal: signal(),
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MediaError);
      expect(error).toMatchObject({
        code: 'input_refused',
        path: 'image_urls.1',
        message: expect.stringMatching(/scheme http|loopback/),
      });
    }
    expect(seen.length).toBe(before);
  });

  it('refuses an input over maxInputBytes and reports a failed fetch as input_fetch_failed', async () => {
    const runner = createFfmpegModelRunner({ allowPrivate: true, ownOrigin, ownFilesDir: workDir, maxInputBytes: 100 });
    const render = (image: string) =>
      runner
        .render({
          model: 'service-video-cinema-long-form-from-references',
          input: { image_urls: [`data:image/png;base64,${png.toString('base64')}`, image] },
          requestId: 'limits',
          outputDir: join(workDir, 'out-limits'),
          signal: signal(),
        })
        .catch((e: unknown) => e);
    // The data URI is over the limit too: it is the first field to fail.
    await expect(render(`http://127.0.0.1:${port}/image.png`)).resolves.toMatchObject({
      code: 'input_refused',
      path: 'image_urls.0',
    });
    const roomy = createFfmpegModelRunner({
      allowPrivate: true,
      ownOrigin,
      ownFilesDir: workDir,
      maxInputBytes: 1_000_000,
    });
    const missing = await roomy
      .render({
        model: 'service-video-cinema-long-form-from-references',
        input: { image_urls: [`http://127.0.0.1:${port}/missing`] },
        requestId: 'missing',
        outputDir: join(workDir, 'out-missing'),
        signal: signal(),
      })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'input_fetch_failed', path: 'image_urls.0' });
    const tooBig = createFfmpegModelRunner({
      allowPrivate: true,
      ownOrigin,
      ownFilesDir: workDir,
      maxInputBytes: png.length - 1,
    });
    await expect(
      tooBig.billedSeconds('service-upscale-video-fast', { video_url: `http://127.0.0.1:${port}/image.png` }),
    ).rejects.toMatchObject({
      code: 'input_refused',
      path: 'video_url',
    });
  });

  it('renders from fetched inputs and probes a fetched clip under allowPrivate', async () => {
    const runner = createFfmpegModelRunner({ allowPrivate: true, ownOrigin, ownFilesDir: workDir });
    const result = await runner.render({
      model: 'service-video-cinema-long-form-from-references',
      input: { image_urls: [`http://127.0.0.1:${port}/image.png`], duration: '4' },
      requestId: 'fetched',
      outputDir: join(workDir, 'out-fetched'),
      signal: signal(),
    });
    expect(result.outputSeconds).toBeCloseTo(4, 1);
    const seconds = await runner.billedSeconds('service-horizon-studio', {
      video_url: `http://127.0.0.1:${port}/clip.mp4`,
      audio_url: 'data:audio/wav;base64,',
    });
    expect(seconds).toBeCloseTo(2, 1);
  });
});
