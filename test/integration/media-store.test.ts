import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { archiveOutput } from '../../src/media/archive';
import { ArchiveError, MediaResolutionError } from '../../src/media/errors';
import { mediaAddress } from '../../src/media/reference';
import { createMediaResolver } from '../../src/media/resolve-input';
import {
  createFileStore,
  hashFile,
  MediaStoreError,
  putMediaBytes,
  putMediaFile,
  type MediaStore,
} from '../../src/media/store';
import { startMinio, type TestMinio } from '../helpers/minio';

/**
 * The media store's two backends against the same expectations — the filesystem, and S3 on a real
 * MinIO server started here — plus reference resolution and output archiving over real HTTP.
 */

let dir: string;
let minio: TestMinio;
let fileStore: MediaStore;
let s3Store: MediaStore;
let server: Server;
let origin: string;
const served = new Map<string, { type: string; body: Buffer; lie?: 'type' | 'short' }>();

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reelflow-media-store-'));
  minio = await startMinio();
  fileStore = createFileStore(join(dir, 'store'));
  s3Store = minio.store('media');
  server = createServer((req, res) => {
    const item = served.get(req.url ?? '');
    if (!item) return void res.writeHead(404).end('gone');
    if (item.lie === 'short') {
      // Declares more than it sends, then ends the connection: a truncated download.
      res.writeHead(200, { 'content-type': item.type, 'content-length': String(item.body.length + 100) });
      res.write(item.body);
      res.destroy();
      return;
    }
    res
      .writeHead(200, {
        'content-type': item.lie === 'type' ? 'text/html' : item.type,
        'content-length': String(item.body.length),
      })
      .end(item.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await minio?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['filesystem', () => fileStore],
  ['S3 (MinIO)', () => s3Store],
])('%s backend', (_name, storeOf) => {
  it('stores a file under its SHA-256, reads it back, and puts it once', async () => {
    const store = storeOf();
    const body = randomBytes(300_000);
    const file = join(dir, `clip-${_name.length}.mp4`);
    writeFileSync(file, body);
    const ref = await putMediaFile(store, file, 'video/mp4', 'pipe-a');
    const sha = createHash('sha256').update(body).digest('hex');
    expect(ref).toEqual({ $media: mediaAddress(sha), type: 'video/mp4', bytes: body.length });
    const stat = await store.stat(sha);
    expect(stat).toMatchObject({ sha256: sha, type: 'video/mp4', bytes: body.length });
    expect((await readAll(await store.read(sha))).equals(body)).toBe(true);
    // Same content again (another pipeline): same object, one more referrer.
    await putMediaFile(store, file, 'video/mp4', 'pipe-b');
    const referrers = (await store.referrers(sha)).map((r) => r.pipeline).sort();
    expect(referrers).toEqual(['pipe-a', 'pipe-b']);
    const listed: string[] = [];
    for await (const object of store.list()) listed.push(object.sha256);
    expect(listed).toContain(sha);
    await store.delete(sha);
    expect(await store.stat(sha)).toBeNull();
    expect(await store.referrers(sha)).toEqual([]);
    await expect(store.read(sha)).rejects.toThrow(MediaStoreError);
  });

  it('refuses a malformed digest rather than building a path or key from it', async () => {
    await expect(storeOf().stat('../../etc/passwd')).rejects.toThrow(/not a SHA-256 digest/);
  });
});

describe('filesystem backend', () => {
  it('refuses a file that does not hash to the address it is stored under', async () => {
    const file = join(dir, 'liar.bin');
    writeFileSync(file, 'abc');
    const wrong = '0'.repeat(64);
    await expect(fileStore.putFile(file, wrong, 'image/png', 3)).rejects.toThrow(/does not hash to/);
    expect(await fileStore.stat(wrong)).toBeNull();
  });

  it('cannot sign URLs: references become data URIs built at the call', async () => {
    const body = randomBytes(2048);
    const ref = await putMediaBytes(fileStore, body, 'image/png', 'pipe-c');
    expect(await fileStore.signedUrl(ref.$media.slice(7), 60)).toBeNull();
    const resolver = createMediaResolver({ store: fileStore, urlLifetimeSeconds: 60 });
    const { input, resolved } = await resolver.resolve({ image_urls: [ref], prompt: 'x' });
    expect(input).toEqual({ image_urls: [`data:image/png;base64,${body.toString('base64')}`], prompt: 'x' });
    expect(resolved).toEqual([{ field: 'image_urls.0', $media: ref.$media, as: 'data-uri' }]);
  });
});

describe('S3 backend on MinIO', () => {
  it('hands out signed URLs that serve the object without credentials, and refuses them once expired', async () => {
    const body = randomBytes(5000);
    const ref = await putMediaBytes(s3Store, body, 'audio/wav', 'pipe-d');
    const sha = ref.$media.slice(7);
    const url = await s3Store.signedUrl(sha, 1);
    expect(url).toMatch(/X-Amz-Signature=/);
    const fresh = await request(url as string);
    expect(fresh.statusCode).toBe(200);
    expect(Buffer.from(await fresh.body.arrayBuffer()).equals(body)).toBe(true);
    // The unsigned URL of the same object is refused: the bucket is private.
    const unsigned = await request((url as string).split('?')[0] as string);
    await unsigned.body.dump();
    expect(unsigned.statusCode).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const expired = await request(url as string);
    const text = await expired.body.text();
    expect(expired.statusCode).toBe(403);
    expect(text).toMatch(/expired/i);
  });

  it('resolves references to signed URLs, never to bytes', async () => {
    const ref = await putMediaBytes(s3Store, randomBytes(1000), 'image/png', 'pipe-e');
    const resolver = createMediaResolver({ store: s3Store, urlLifetimeSeconds: 600 });
    const { input, resolved } = await resolver.resolve({ image_urls: [ref, 'https://example.com/a.png'] });
    const [signed, plain] = input.image_urls as string[];
    expect(signed).toMatch(
      new RegExp(`^${minio.endpoint}/${minio.bucket}/media/objects/${ref.$media.slice(7)}\\?.*X-Amz-Expires=600`),
    );
    expect(plain).toBe('https://example.com/a.png');
    expect(resolved.map((r) => r.as)).toEqual(['signed-url']);
  });
});

describe('resolving archived outputs', () => {
  it('uses the service URL while it is served and the archived copy once it is gone', async () => {
    const body = randomBytes(4000);
    served.set('/files/r1/out.mp4', { type: 'video/mp4', body });
    const archived = await archiveOutput(
      { url: `${origin}/files/r1/out.mp4`, file_name: 'out.mp4', content_type: 'video/mp4' },
      { store: fileStore, pipeline: 'pipe-f', serviceOrigin: origin },
    );
    expect(archived).toMatchObject({
      $media: mediaAddress(createHash('sha256').update(body).digest('hex')),
      bytes: 4000,
      type: 'video/mp4',
      url: `${origin}/files/r1/out.mp4`,
    });
    expect((await fileStore.referrers(archived.$media.slice(7))).map((r) => r.pipeline)).toEqual(['pipe-f']);
    const resolver = createMediaResolver({ store: fileStore, urlLifetimeSeconds: 60, serviceOrigin: origin });
    const { $media, type, bytes, url } = archived;
    const ref = { $media, type, bytes, url };
    expect((await resolver.resolve({ video_url: ref })).input.video_url).toBe(url);
    served.delete('/files/r1/out.mp4');
    const after = await resolver.resolve({ video_url: ref });
    expect(after.input.video_url).toBe(`data:video/mp4;base64,${body.toString('base64')}`);
    expect(after.resolved[0]?.as).toBe('data-uri');
  });

  it('names the field when a reference is neither served nor stored', async () => {
    const resolver = createMediaResolver({ store: fileStore, urlLifetimeSeconds: 60, serviceOrigin: origin });
    const missing = {
      $media: mediaAddress('a'.repeat(64)),
      type: 'video/mp4',
      bytes: 10,
      url: `${origin}/files/none/x.mp4`,
    };
    const failure = await resolver.resolve({ video_url: missing }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MediaResolutionError);
    expect((failure as MediaResolutionError).field).toBe('video_url');
    expect((failure as Error).message).toMatch(/no longer serves .* is not in the media store/);
  });

  it('refuses an output whose type or length differs from what the service reported', async () => {
    served.set('/files/r2/typed.mp4', { type: 'video/mp4', body: randomBytes(100), lie: 'type' });
    await expect(
      archiveOutput(
        { url: `${origin}/files/r2/typed.mp4`, file_name: 'typed.mp4', content_type: 'video/mp4' },
        { store: fileStore, pipeline: 'p', serviceOrigin: origin },
      ),
    ).rejects.toThrow(/reported video\/mp4 but serves text\/html/);
    served.set('/files/r2/short.mp4', { type: 'video/mp4', body: randomBytes(100), lie: 'short' });
    const short = await archiveOutput(
      { url: `${origin}/files/r2/short.mp4`, file_name: 'short.mp4', content_type: 'video/mp4' },
      { store: fileStore, pipeline: 'p', serviceOrigin: origin },
    ).catch((e: unknown) => e);
    expect(short).toBeInstanceOf(ArchiveError);
    expect((short as ArchiveError).retryable).toBe(true);
  });

  it('hashes what it stores (the file store checks the copy against the address)', async () => {
    const file = join(dir, 'hash.bin');
    writeFileSync(file, 'hello');
    expect(await hashFile(file)).toEqual({ sha256: createHash('sha256').update('hello').digest('hex'), bytes: 5 });
  });
});
