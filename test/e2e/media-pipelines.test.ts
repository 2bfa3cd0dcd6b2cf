import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { ActivityInboundCallsInterceptor, ActivityExecuteInput, Next } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { probe, runFfmpeg } from '../../src/media/ffmpeg';
import { startLocalStack, type LocalStack } from '../../src/stack/local-stack';
import { jsonOf, runCli } from '../integration/cli-process';
import { startMinio, type TestMinio } from '../helpers/minio';

/**
 * Real media through real parts: the local stack (Temporal dev server, local service, webhook
 * bridge, worker) and `reelflow` CLI child processes, with local files of real length — a 60 s clip,
 * a 60 s WAV voice-over (5.3 MB), thirty reference images — first on the filesystem media store,
 * then on S3 (a real MinIO). Workflows must carry references only: histories are read and measured.
 */

const LONG_FORM = 'service-video-cinema-long-form-from-references';
const HISTORY_BUDGET_BYTES = 64 * 1024;
let inputs: string;

/** The inputs a person would have on disk, made with ffmpeg. */
async function makeInputs(dir: string): Promise<void> {
  await runFfmpeg([
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x180:rate=10',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=220:sample_rate=22050',
    '-t',
    '60',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    join(dir, 'clip-60s.mp4'),
  ]);
  await runFfmpeg([
    '-y',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=44100',
    '-t',
    '60',
    '-ac',
    '1',
    '-c:a',
    'pcm_s16le',
    join(dir, 'voice-60s.wav'),
  ]);
  for (let i = 0; i < 30; i += 1) {
    const colour = `0x${((i * 0x3a5f1d) & 0xffffff).toString(16).padStart(6, '0')}`;
    await runFfmpeg([
      '-y',
      '-f',
      'lavfi',
      '-i',
      `color=c=${colour}:s=320x180`,
      '-frames:v',
      '1',
      join(dir, `ref-${String(i).padStart(2, '0')}.png`),
    ]);
  }
}

function writeSpec(name: string, spec: unknown): string {
  const file = join(inputs, `${name}.json`);
  writeFileSync(file, JSON.stringify(spec, null, 2));
  return file;
}

const thirtyRefs = () => Array.from({ length: 30 }, (_, i) => `ref-${String(i).padStart(2, '0')}.png`);

/** Size of a workflow's whole history as Temporal stores it (protobuf), read from the server. */
async function historyBytes(stack: LocalStack, workflowId: string): Promise<{ bytes: number; inlineMedia: boolean }> {
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const client = new Client({ connection, namespace: stack.namespace });
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const encoded = Buffer.from(
      temporal.api.history.v1.History.encode(temporal.api.history.v1.History.create(history)).finish(),
    );
    // JSON payloads sit in the encoding as they are: a data URI would show its `;base64,`.
    return { bytes: encoded.length, inlineMedia: encoded.includes(';base64,') };
  } finally {
    await connection.close();
  }
}

function cliEnvOf(stack: LocalStack, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_NAMESPACE: stack.namespace,
    REELFLOW_TASK_QUEUE: stack.taskQueue,
    REELFLOW_SERVICE_URL: stack.serviceUrl,
    REELFLOW_API_KEY: stack.apiKey,
    REELFLOW_STATE_DIR: stack.paths.root,
    ...extra,
  };
}

/** The service's own output files of a step's videos (`<data>/files/<request>/<file>`). */
function serviceFilesOf(stack: LocalStack, urls: string[]): string[] {
  return urls.map((url) => {
    const [, requestId, fileName] = new URL(url).pathname.split('/').filter(Boolean);
    return join(stack.paths.serviceData, 'files', requestId as string, fileName as string);
  });
}

/**
 * Stands for a service that has deleted its outputs by the time a later step reads them: right before
 * a named step's submit runs (`<pipeline>/job/<step>`), the service's files of every archived output
 * its input reads are removed (the moment is chosen by a real activity interceptor, so the test does
 * not depend on timing).
 */
const expireBeforeSubmit = new Set<string>();
let stackForExpiry: LocalStack | undefined;
class ExpireOutputs implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const request = input.args[0] as { idempotencyKey?: string; input?: Record<string, unknown> } | undefined;
    const key = request?.idempotencyKey?.split(':')[1];
    if (
      Context.current().info.activityType === 'reelflow.submitAndSubscribe' &&
      key !== undefined &&
      expireBeforeSubmit.has(key) &&
      stackForExpiry
    ) {
      const urls = Object.values(request?.input ?? {}).flatMap((value) =>
        typeof value === 'object' && value !== null && '$media' in value && 'url' in value ? [String(value.url)] : [],
      );
      for (const file of serviceFilesOf(stackForExpiry, urls)) if (existsSync(file)) unlinkSync(file);
    }
    return next(input);
  }
}

beforeAll(async () => {
  inputs = mkdtempSync(join(tmpdir(), 'reelflow-media-inputs-'));
  await makeInputs(inputs);
}, 300_000);

afterAll(() => rmSync(inputs, { recursive: true, force: true }));

describe('filesystem media store (the local stack default)', () => {
  let stateDir: string;
  let stack: LocalStack;
  let env: Record<string, string>;

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'reelflow-media-stack-'));
    stack = await startLocalStack({
      stateDir,
      autoPorts: true,
      reuseRunning: false,
      worker: { interceptors: { activity: [() => ({ inbound: new ExpireOutputs() })] } },
    });
    stackForExpiry = stack;
    env = cliEnvOf(stack);
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('re-voices a 60 s clip with a 60 s WAV voice-over from local files', async () => {
    expect(statSync(join(inputs, 'voice-60s.wav')).size).toBeGreaterThan(5_000_000);
    const spec = writeSpec('revoice-60', {
      name: 'revoice-60',
      steps: [
        {
          id: 'revoice',
          model: 'service-horizon-studio',
          input: { video_url: 'clip-60s.mp4', audio_url: 'voice-60s.wav' },
        },
      ],
    });
    const run = await runCli(['run', spec, '--json'], env);
    expect({ code: run.code, stderr: run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
    const summary = jsonOf(run);
    expect(summary.status).toBe('completed');
    expect(summary.steps[0].input).toMatchObject({
      video_url: { $media: expect.stringMatching(/^sha256:/), type: 'video/mp4' },
      audio_url: { type: 'audio/wav', bytes: statSync(join(inputs, 'voice-60s.wav')).size },
    });
    const out = join(stateDir, 'out-revoice-60');
    const outputs = await runCli(['outputs', 'revoice-60', '--to', out, '--json'], env);
    expect(outputs.code).toBe(0);
    const [file] = jsonOf(outputs).files as { file: string }[];
    const probed = await probe((file as { file: string }).file);
    expect(probed.duration).toBeGreaterThan(59);
    expect(probed.streams.some((s) => s.codecType === 'audio')).toBe(true);
    const history = await historyBytes(stack, 'pipeline/revoice-60');
    expect(history.bytes).toBeLessThan(HISTORY_BUDGET_BYTES);
    expect(history.inlineMedia).toBe(false);
  }, 600_000);

  it('runs a three-step pipeline from 30 local references and a 60 s voice-over with a history under 64 KiB; status --json has no data URI', async () => {
    const spec = writeSpec('three-30', {
      name: 'three-30',
      steps: [
        {
          id: 'generate',
          model: LONG_FORM,
          input: { image_urls: thirtyRefs(), prompt: 'thirty references', duration: '4' },
        },
        {
          id: 'revoice',
          model: 'service-horizon-studio',
          input: { video_url: { $from: 'generate' }, audio_url: 'voice-60s.wav' },
        },
        { id: 'upscale', model: 'service-upscale-video-fast', input: { video_url: { $from: 'revoice' } } },
      ],
    });
    const run = await runCli(['run', spec, '--json'], env);
    expect({ code: run.code, stderr: run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
    const summary = jsonOf(run);
    expect(summary.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed', 'completed']);
    expect(summary.steps[0].input.image_urls).toHaveLength(30);
    const history = await historyBytes(stack, 'pipeline/three-30');
    expect(history.bytes).toBeLessThan(HISTORY_BUDGET_BYTES);
    expect(history.inlineMedia).toBe(false);
    const status = await runCli(['status', 'three-30', '--json'], env);
    expect(status.code).toBe(0);
    expect(status.stdout).not.toContain('data:');
    expect(jsonOf(status).progress.status).toBe('completed');
  }, 900_000);

  it('a step whose input URL has expired runs from the archived copy, and reelflow outputs works once the service files are gone', async () => {
    const spec = writeSpec('archived', {
      name: 'archived',
      archive: 'always',
      steps: [
        { id: 'generate', model: LONG_FORM, input: { image_urls: ['ref-00.png', 'ref-01.png'], duration: '4' } },
        { id: 'upscale', model: 'service-upscale-video-fast', input: { video_url: { $from: 'generate' } } },
        // Reads the first step's output a whole step later: by then the service has deleted its file.
        { id: 'upscale-original', model: 'service-upscale-video-fast', input: { video_url: { $from: 'generate' } } },
      ],
    });
    expireBeforeSubmit.add('archived/job/upscale-original');
    const run = await runCli(['run', spec, '--json'], env);
    expect({ code: run.code, stderr: run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
    const summary = jsonOf(run);
    const generateUrl = summary.steps[0].output.videos[0].url as string;
    expect(existsSync(serviceFilesOf(stack, [generateUrl])[0] as string)).toBe(false);
    expect(summary.steps[0].archived).toEqual([
      expect.objectContaining({ $media: expect.stringMatching(/^sha256:/), type: 'video/mp4', url: generateUrl }),
    ]);
    // The last step waited for the first step's copy and read it: the service could no longer serve its own file.
    expect(summary.steps[2].input.video_url).toMatchObject({
      $media: summary.steps[0].archived[0].$media,
      url: generateUrl,
    });
    expect(summary.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed', 'completed']);

    // Every service file of the pipeline goes; the outputs still come back, from the archive.
    for (const file of serviceFilesOf(
      stack,
      summary.steps.map((s: { output: { videos: { url: string }[] } }) => s.output.videos[0]?.url as string),
    )) {
      if (existsSync(file)) unlinkSync(file);
    }
    const out = join(stateDir, 'out-archived');
    const outputs = await runCli(['outputs', 'archived', '--to', out, '--json'], env);
    expect({ code: outputs.code, stderr: outputs.stderr }).toEqual({ code: 0, stderr: '' });
    const files = jsonOf(outputs).files as { step: string; file: string; from: string }[];
    expect(files.map((f) => [f.step, f.from])).toEqual([
      ['generate', 'archive'],
      ['upscale', 'archive'],
      ['upscale-original', 'archive'],
    ]);
    for (const f of files) expect((await probe(f.file)).streams.some((s) => s.codecType === 'video')).toBe(true);
  }, 900_000);

  it('without an archive, reelflow outputs fails once the service has deleted a file, and says why', async () => {
    const spec = writeSpec('unarchived', {
      name: 'unarchived',
      archive: 'never',
      steps: [
        { id: 'generate', model: LONG_FORM, input: { image_urls: ['ref-02.png'], duration: '4' } },
        { id: 'upscale', model: 'service-upscale-video-fast', input: { video_url: { $from: 'generate' } } },
      ],
    });
    const run = await runCli(['run', spec, '--json'], env);
    expect(run.code).toBe(0);
    const summary = jsonOf(run);
    const generateUrl = summary.steps[0].output.videos[0].url as string;
    expect(summary.steps[0].archived).toBeUndefined();
    for (const file of serviceFilesOf(stack, [generateUrl])) if (existsSync(file)) unlinkSync(file);
    const outputs = await runCli(['outputs', 'unarchived', '--to', join(stateDir, 'out-unarchived')], env);
    expect(outputs.code).not.toBe(0);
    expect(outputs.stderr).toMatch(/cannot download the output of step generate .*not archived/);
  }, 900_000);
});

describe('S3 media store (a real MinIO)', () => {
  let stateDir: string;
  let stack: LocalStack;
  let minio: TestMinio;
  let env: Record<string, string>;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    minio = await startMinio('reelflow-e2e');
    // The stack's worker reads the store from the environment, like `reelflow dev` would.
    for (const [key, value] of Object.entries(minio.env('pipelines'))) {
      saved[key] = process.env[key];
      process.env[key] = value;
    }
    stateDir = mkdtempSync(join(tmpdir(), 'reelflow-media-s3-'));
    stack = await startLocalStack({ stateDir, autoPorts: true, reuseRunning: false });
    env = cliEnvOf(stack, minio.env('pipelines'));
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
    await minio?.stop();
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('hands the service signed URLs of the bucket: the service fetches every input through them', async () => {
    const spec = writeSpec('s3-two', {
      name: 's3-two',
      steps: [
        { id: 'generate', model: LONG_FORM, input: { image_urls: thirtyRefs(), duration: '4' } },
        {
          id: 'revoice',
          model: 'service-horizon-studio',
          input: { video_url: { $from: 'generate' }, audio_url: 'voice-60s.wav' },
        },
      ],
    });
    const run = await runCli(['run', spec, '--json'], env);
    expect({ code: run.code, stderr: run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
    // The service's input access log: one line per input URL it fetched.
    const log = readFileSync(join(stack.paths.serviceData, 'input-access.log'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            field: string;
            origin: string;
            path: string;
            signed: boolean;
            outcome: string;
            queryParameters: string[];
          },
      );
    const fromBucket = log.filter((entry) => entry.origin === minio.endpoint);
    const fields = new Set(fromBucket.map((entry) => entry.field));
    for (let i = 0; i < 30; i += 1) expect(fields).toContain(`image_urls.${i}`);
    expect(fields).toContain('audio_url');
    for (const entry of fromBucket) {
      expect(entry).toMatchObject({ signed: true, outcome: 'ok' });
      expect(entry.path).toMatch(new RegExp(`^/reelflow-e2e/pipelines/objects/[0-9a-f]{64}$`));
      expect(entry.queryParameters).toEqual(expect.arrayContaining(['X-Amz-Signature', 'X-Amz-Expires']));
    }
    // The log never keeps a signature value.
    expect(readFileSync(join(stack.paths.serviceData, 'input-access.log'), 'utf8')).not.toMatch(/X-Amz-Signature=/);
    const history = await historyBytes(stack, 'pipeline/s3-two');
    expect(history.bytes).toBeLessThan(HISTORY_BUDGET_BYTES);
    expect(history.inlineMedia).toBe(false);
  }, 900_000);
});
