import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { MediaDeps } from '../../src/activities';
import { createOpActivities, type OpActivities } from '../../src/activities/ops';
import { FAILURE_TYPES } from '../../src/contract/failure-types';
import { probe, runFfmpeg, type ProbeResult } from '../../src/media/ffmpeg';
import { digestOf } from '../../src/media/reference';
import { createFileStore, putMediaFile, type MediaStore } from '../../src/media/store';
import type { MediaRef } from '../../src/contract';
import type { OpRequest, OpResult } from '../../src/pipeline-spec/steps/op-types';
import { loadSpecFile } from '../../src/cli/lib/spec-files';
import { createMediaResolver } from '../../src/media/resolve-input';
import { downloadOutputs } from '../../src/cli/commands/outputs';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { request as httpRequest } from 'undici';
import { startMinio, type TestMinio } from '../helpers/minio';

/**
 * The local media operations with real ffmpeg and a real (filesystem) media store: inputs served over
 * loopback HTTP as a local service's outputs are (its origin may be private), or read from the store.
 * Clips are made here with lavfi (testsrc, sine): one second, small sizes.
 */

let dir: string;
let store: MediaStore;
let server: Server;
let origin: string;
let ops: OpActivities;
let storedClipB: MediaRef;
const served = new Map<string, Buffer>();

/** Writes a test clip with ffmpeg and returns its path. */
async function makeClip(name: string, args: string[]): Promise<string> {
  const file = join(dir, name);
  await runFfmpeg(['-v', 'error', ...args, file]);
  return file;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reelflow-ops-'));
  store = createFileStore(join(dir, 'store'));
  const clipA = await makeClip('a.mp4', [
    ...['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25:duration=1'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-shortest'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'],
  ]);
  // A different size and frame rate, and no sound.
  const clipB = await makeClip('b.mp4', [
    ...['-f', 'lavfi', '-i', 'testsrc=size=160x128:rate=30:duration=1'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
  ]);
  const long = await makeClip('long.mp4', [
    ...['-f', 'lavfi', '-i', 'testsrc=size=160x128:rate=25:duration=2'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
  ]);
  const voice = await makeClip('voice.wav', ['-f', 'lavfi', '-i', 'sine=frequency=220:duration=0.5']);
  served.set('/a.mp4', readFileSync(clipA));
  served.set('/voice.wav', readFileSync(voice));
  served.set('/long.mp4', readFileSync(long));
  storedClipB = await putMediaFile(store, clipB, 'video/mp4', 'ops-test');
  server = createServer((req, res) => {
    const body = served.get(req.url ?? '');
    if (!body) return res.writeHead(404).end();
    return res.writeHead(200, { 'content-length': String(body.length) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const media: MediaDeps = { store, urlLifetimeSeconds: 3600, serviceOrigin: origin };
  ops = createOpActivities(media);
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `request` and probes the stored output. */
async function run(request: OpRequest): Promise<{ result: OpResult; probed: ProbeResult }> {
  const result = await ops.runOp(request);
  const [copy] = result.archived;
  expect(copy).toBeDefined();
  const file = join(dir, `out-${Math.random().toString(36).slice(2)}`);
  const chunks: Buffer[] = [];
  for await (const chunk of await store.read(digestOf(copy!.$media)!)) chunks.push(chunk as Buffer);
  writeFileSync(file, Buffer.concat(chunks));
  return { result, probed: await probe(file) };
}

const audioStreams = (p: ProbeResult) => p.streams.filter((s) => s.codecType === 'audio').length;

/** The failure `request` ends with. */
async function failureOf(request: OpRequest, activities = ops): Promise<ApplicationFailure> {
  const error = await activities.runOp(request).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

describe('local media operations (real ffmpeg, filesystem store)', () => {
  it('concat conforms clips of different size and frame rate; a retry returns the same stored output and URL', async () => {
    const request: OpRequest = {
      op: 'concat',
      input: { videos: [`${origin}/a.mp4`, storedClipB] },
      key: 'p/op/cut',
      pipeline: 'p',
    };
    const { result, probed } = await run(request);
    expect(Math.abs(probed.duration - 2)).toBeLessThanOrEqual(0.2);
    expect([probed.width, probed.height]).toEqual([320, 240]);
    expect(audioStreams(probed)).toBe(1);
    const [video] = result.videos;
    expect(video).toMatchObject({ content_type: 'video/mp4', width: 320, height: 240 });
    expect(video?.file_name).toMatch(/^cut-[0-9a-f]{12}\.mp4$/);
    expect(result.archived[0]).toMatchObject({ url: video?.url, file_name: video?.file_name, type: 'video/mp4' });
    expect(await store.referrers(digestOf(result.archived[0]!.$media)!)).toEqual([
      expect.objectContaining({ pipeline: 'p' }),
    ]);
    // The same inputs again (an activity retried after a crash): the same bytes, the same object, the same URL.
    const again = await ops.runOp(request);
    expect(again).toEqual(result);
  });

  it('trim keeps end - start seconds', async () => {
    const { result, probed } = await run({
      op: 'trim',
      input: { video: `${origin}/a.mp4`, start: 0.2, end: 0.7 },
      key: 'p/op/short',
    });
    expect(Math.abs(probed.duration - 0.5)).toBeLessThanOrEqual(0.1);
    expect(audioStreams(probed)).toBe(1);
    expect(result.videos[0]?.duration_seconds).toBeCloseTo(
      probed.streams.find((s) => s.codecType === 'video')!.duration!,
      2,
    );
  });

  it('mux_audio replaces or mixes the sound and keeps the length of the video', async () => {
    const replaced = await run({
      op: 'mux_audio',
      input: { video: storedClipB, audio: `${origin}/voice.wav` },
      key: 'p/op/voiced',
    });
    const mixed = await run({
      op: 'mux_audio',
      input: { video: `${origin}/a.mp4`, audio: `${origin}/voice.wav`, mode: 'mix' },
      key: 'p/op/mixed',
    });
    for (const { probed } of [replaced, mixed]) {
      expect(audioStreams(probed)).toBe(1);
      expect(Math.abs(probed.duration - 1)).toBeLessThanOrEqual(0.1);
    }
    expect(mixed.result.archived[0]?.$media).not.toBe(replaced.result.archived[0]?.$media);
  });

  it('frame takes a still at a time or the last frame, as PNG or JPEG', async () => {
    const at = await run({ op: 'frame', input: { video: `${origin}/long.mp4`, at: 1.0 }, key: 'p/op/still' });
    const last = await run({
      op: 'frame',
      input: { video: storedClipB, at: 'last', format: 'jpeg' },
      key: 'p/op/last/2',
    });
    expect(at.result.videos).toEqual([]);
    expect(at.result.images?.[0]).toMatchObject({ content_type: 'image/png', width: 160, height: 128 });
    expect(at.probed.streams[0]).toMatchObject({ codecName: 'png', width: 160, height: 128 });
    expect(last.result.images?.[0]).toMatchObject({ content_type: 'image/jpeg', width: 160, height: 128 });
    expect(last.result.images?.[0]?.file_name).toMatch(/^last-2-[0-9a-f]{12}\.jpg$/);
    expect(last.probed.streams[0]?.codecName).toBe('mjpeg');
  });

  it('frame at 1.0 s of a one-second clip is past its end: OpInputInvalid naming `at`', async () => {
    const failure = await failureOf({ op: 'frame', input: { video: `${origin}/a.mp4`, at: 1.0 }, key: 'p/op/x' });
    expect(failure).toMatchObject({ type: FAILURE_TYPES.opInputInvalid, nonRetryable: true });
    expect(failure.message).toMatch(/^at: is at or after the end of the video/);
  });

  it('refuses an input that is not a video, naming its field, for good', async () => {
    const failure = await failureOf({
      op: 'concat',
      input: { videos: [`${origin}/a.mp4`, `${origin}/voice.wav`] },
      key: 'p/op/x',
    });
    expect(failure).toMatchObject({ type: FAILURE_TYPES.opInputInvalid, nonRetryable: true });
    expect(failure.message).toMatch(/^videos\.1: is not a video/);
    expect(failure.details?.[0]).toEqual({ code: 'op_input_invalid', field: 'videos.1' });
  });

  it('refuses a trim past the end of the video and an input that is not there', async () => {
    const late = await failureOf({ op: 'trim', input: { video: storedClipB, start: 0.5, end: 3 }, key: 'p/op/x' });
    expect(late.message).toMatch(/^end: is after the end of the video \(1\.000 s\)/);
    const missing = await failureOf({
      op: 'trim',
      input: { video: `${origin}/gone.mp4`, start: 0, end: 1 },
      key: 'p/op/x',
    });
    expect(missing).toMatchObject({ type: FAILURE_TYPES.opInputInvalid, nonRetryable: true });
    expect(missing.message).toMatch(/^video: cannot fetch .*404/);
  });

  it('a private URL of another origin is refused by the address rules', async () => {
    const other = createOpActivities({ store, urlLifetimeSeconds: 3600 });
    const failure = await failureOf(
      { op: 'trim', input: { video: `${origin}/a.mp4`, start: 0, end: 1 }, key: 'p/op/x' },
      other,
    );
    expect(failure).toMatchObject({ type: FAILURE_TYPES.opInputInvalid, nonRetryable: true });
  });

  it('without a media store: a non-retryable failure naming the variable to set', async () => {
    const failure = await failureOf(
      { op: 'trim', input: { video: `${origin}/a.mp4`, start: 0, end: 1 }, key: 'p/op/x' },
      createOpActivities(undefined),
    );
    expect(failure).toMatchObject({ type: FAILURE_TYPES.mediaUnavailable, nonRetryable: true });
    expect(failure.message).toContain('REELFLOW_MEDIA_STORE');
  });

  it("the CLI's spec loader stores local files named in an op step's media fields (video, audio, videos)", async () => {
    const file = join(dir, 'edit.json');
    const steps = [
      { id: 'cut', op: 'concat', input: { videos: ['a.mp4', 'b.mp4'] } },
      { id: 'voiced', op: 'mux_audio', input: { video: { $from: 'cut' }, audio: 'voice.wav' } },
    ];
    writeFileSync(file, JSON.stringify({ name: 'edit', steps }));
    const loaded = await loadSpecFile(file, undefined, { store });
    const [cut, voiced] = loaded.steps.map((step) => step.input);
    expect(cut?.videos).toEqual([
      expect.objectContaining({ $media: expect.stringMatching(/^sha256:/), type: 'video/mp4' }),
      expect.objectContaining({ $media: storedClipB.$media }),
    ]);
    expect(voiced?.audio).toEqual(expect.objectContaining({ $media: expect.stringMatching(/^sha256:/) }));
    expect(voiced?.video).toEqual({ $from: 'cut' });
  });

  it("a paid step's input naming an op output gets the stored bytes at the call (a data URI from a filesystem store)", async () => {
    const still = await ops.runOp({ op: 'frame', input: { video: storedClipB, at: 0 }, key: 'p/op/first' });
    const resolver = createMediaResolver({ store, urlLifetimeSeconds: 3600, serviceOrigin: origin });
    const { input, resolved } = await resolver.resolve({ image_urls: [still.archived[0]] });
    expect(resolved).toEqual([expect.objectContaining({ field: 'image_urls.0', as: 'data-uri' })]);
    expect((input.image_urls as string[])[0]).toMatch(/^data:image\/png;base64,/);
  });

  it('`reelflow outputs` copies op outputs (a video and a frame) out of the media store', async () => {
    const key = (step: string) => ({ request_id: `p/op/${step}`, status: 'COMPLETED', credits_used: 0 });
    const cut = await ops.runOp({ op: 'trim', input: { video: storedClipB, start: 0, end: 0.5 }, key: 'p/op/cut' });
    const still = await ops.runOp({ op: 'frame', input: { video: storedClipB, at: 'last' }, key: 'p/op/still' });
    const summary = {
      steps: [{ id: 'cut' }, { id: 'still' }],
      outputs: {
        cut: { ...key('cut'), model: 'op:trim', ...cut },
        still: { ...key('still'), model: 'op:frame', ...still },
      },
    } as unknown as PipelineSummary;
    const files = await downloadOutputs(summary, join(dir, 'outputs'), undefined, store);
    expect(files.map((f) => [f.step, f.from, basename(f.file)])).toEqual([
      ['cut', 'archive', 'cut-1.mp4'],
      ['still', 'archive', 'still-1.png'],
    ]);
  });
});

describe('local media operations on an S3 media store (real MinIO)', () => {
  let minio: TestMinio;
  beforeAll(async () => {
    minio = await startMinio();
  }, 120_000);
  afterAll(async () => {
    await minio?.stop();
  });

  it('hands out a signed URL that serves the output; a retry signs the same URL; a later op reads it from the store', async () => {
    const s3 = minio.store('ops');
    const onS3 = createOpActivities({ store: s3, urlLifetimeSeconds: 3600, serviceOrigin: origin });
    const request: OpRequest = {
      op: 'trim',
      input: { video: `${origin}/a.mp4`, start: 0, end: 0.5 },
      key: 's3/op/short',
      signedAt: Date.now(),
    };
    const first = await onS3.runOp(request);
    const url = first.videos[0]!.url;
    expect(url).toMatch(new RegExp(`^${minio.endpoint}/.*X-Amz-Signature=`));
    const served = await httpRequest(url);
    const body = Buffer.from(await served.body.arrayBuffer());
    expect(served.statusCode).toBe(200);
    expect(body.length).toBe(first.archived[0]!.bytes);
    // Retried a second later: the same bytes, the same object, signed as of the same time.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await onS3.runOp(request)).videos[0]!.url).toBe(url);
    // MinIO is on loopback, another origin than the service's: only the store can give the bytes.
    const still = await onS3.runOp({ op: 'frame', input: { video: url, at: 'last' }, key: 's3/op/still' });
    expect(still.images?.[0]).toMatchObject({ width: 320, height: 240 });
  });
});
