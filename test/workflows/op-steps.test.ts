import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { SubmitRequest } from '../../src/activities';
import { createOpActivities } from '../../src/activities/ops';
import { FAILURE_TYPES } from '../../src/contract/failure-types';
import { runFfmpeg } from '../../src/media/ffmpeg';
import { createFileStore } from '../../src/media/store';
import type { PipelineSpec } from '../../src/pipeline-spec';
import type { OpStepOutput } from '../../src/pipeline-spec/steps/op-types';
import type { PipelineSummary, PipelineWorkflowInput } from '../../src/workflows/pipeline-types';
import { scriptedService, useScriptedWorker, type Script } from './scripted-service';

/**
 * Op steps inside a version-1 pipeline, and the operation step functions in a team's workflow, on the time-skipping server: the paid jobs are scripted (they
 * stand for the service, whose outputs a loopback server serves as a local service would), the
 * operations are the real ones (ffmpeg, a filesystem media store), the workflow and worker real.
 */

const TASK_QUEUE = 'op-steps';
const LONG_FORM = 'service-video-cinema-long-form-from-references';
const UPSCALE = 'service-upscale-video-fast';
const INPUT = { image_urls: ['https://media.test/reference.png'] };

const dir = mkdtempSync(join(tmpdir(), 'reelflow-op-steps-'));
let server: Server;
let origin = '';
let clip: Buffer;

// The service's outputs live on a loopback origin: the worker's configured service may be private.
const opsOrigin = { value: '' };
const service = scriptedService({
  runOp: (request) =>
    createOpActivities({
      store: createFileStore(join(dir, 'store')),
      urlLifetimeSeconds: 3600,
      serviceOrigin: opsOrigin.value,
    }).runOp(request),
});
const scripted = useScriptedWorker(TASK_QUEUE, service, async () => ({
  workflowsPath: join(__dirname, 'op-steps.workflows.ts'),
}));

beforeAll(async () => {
  const file = join(dir, 'render.mp4');
  await runFfmpeg([
    ...['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=192x108:rate=25:duration=1'],
    ...['-f', 'lavfi', '-i', 'sine=frequency=330:duration=1', '-shortest'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', file],
  ]);
  clip = readFileSync(file);
  server = createServer((_req, res) => res.writeHead(200, { 'content-length': String(clip.length) }).end(clip));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  opsOrigin.value = origin;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function start(name: string, steps: PipelineSpec['steps']) {
  const workflowId = `pipeline/${name}`;
  const script: Script = { quote: 80, outputUrl: (requestId) => `${origin}/files/${requestId}.mp4` };
  service.script(workflowId, script);
  const input: PipelineWorkflowInput = { spec: { name, steps }, publishSearchAttributes: false };
  return scripted.env.client.workflow.start('pipelineWorkflow', { taskQueue: TASK_QUEUE, workflowId, args: [input] });
}

describe('op steps in a version-1 pipeline (time-skipping server, real ffmpeg)', () => {
  it('runs ops after a paid step in spec order; a later paid step reads the op output through its stored copy', async () => {
    const handle = await start('ad', [
      { id: 'gen', model: LONG_FORM, input: INPUT },
      { id: 'cut', op: 'concat', input: { videos: [{ $from: 'gen' }, { $from: 'gen' }] } },
      { id: 'still', op: 'frame', input: { video: { $from: 'cut' }, at: 'last' } },
      { id: 'up', model: UPSCALE, input: { video_url: { $from: 'cut' } } },
    ]);
    const summary = (await handle.result()) as PipelineSummary;
    expect(summary.status).toBe('completed');
    const cut = summary.outputs.cut as unknown as OpStepOutput;
    const still = summary.outputs.still as unknown as OpStepOutput;
    expect(cut).toMatchObject({ model: 'op:concat', credits_used: 0, request_id: 'ad/op/cut' });
    expect(cut.videos[0]).toMatchObject({ content_type: 'video/mp4', width: 192, height: 108 });
    expect(Math.abs((cut.videos[0]?.duration_seconds ?? 0) - 2)).toBeLessThanOrEqual(0.2);
    expect(still.images?.[0]).toMatchObject({ content_type: 'image/png', width: 192, height: 108 });
    // Ops cost nothing and call no service: the two paid steps are the ledger.
    expect(summary.ledger).toMatchObject({ charged: 160, net: 160 });
    const rows = Object.fromEntries(summary.steps.map((s) => [s.id, s]));
    expect(rows.cut).toMatchObject({ op: 'concat', status: 'completed', charged: 0, requestIds: [] });
    expect(rows.cut?.archived).toEqual(cut.archived);
    expect(rows.still).toMatchObject({ op: 'frame', status: 'completed' });
    const id = handle.workflowId;
    expect(service.calls(id, 'runOp').map((c) => (c.args[0] as { key: string }).key)).toEqual([
      'ad/op/cut',
      'ad/op/still',
    ]);
    const submits = service.calls(id, 'submitAndSubscribe').map((c) => c.args[0] as SubmitRequest);
    expect(submits.map((s) => s.model)).toEqual([LONG_FORM, UPSCALE]);
    // The op's output reaches the paid step as its media-store copy, resolved to a URL or data URI at the call.
    expect(submits[1]?.input.video_url).toEqual(cut.archived[0]);
    expect(service.calls(id, 'archiveOutputs')).toEqual([]);
  });

  it('an op that cannot use its input fails the pipeline with its type; nothing after it is submitted', async () => {
    const handle = await start('bad-trim', [
      { id: 'gen', model: LONG_FORM, input: INPUT },
      { id: 'short', op: 'trim', input: { video: { $from: 'gen' }, start: 0, end: 5 } },
      { id: 'up', model: UPSCALE, input: { video_url: { $from: 'short' } } },
    ]);
    const error = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const failure = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(failure.type).toBe(FAILURE_TYPES.stepFailed);
    expect(failure.message).toContain(`[${FAILURE_TYPES.opInputInvalid}]`);
    expect(failure.message).toContain('end: is after the end of the video');
    const id = handle.workflowId;
    // Not retried: retrying cannot make the video longer.
    expect(service.calls(id, 'runOp')).toHaveLength(1);
    expect(service.calls(id, 'submitAndSubscribe')).toHaveLength(1);
  });

  it("the step functions chain in a team's workflow: an operation reads an earlier one's URL from the store", async () => {
    const handle = await scripted.env.client.workflow.start('cutTrimFrameMix', {
      taskQueue: TASK_QUEUE,
      workflowId: 'team/cut',
      args: [`${origin}/clip.mp4`],
    });
    const [cut, middle, still, mixed] = (await handle.result()) as OpStepOutput[];
    expect(Math.abs((cut?.videos[0]?.duration_seconds ?? 0) - 2)).toBeLessThanOrEqual(0.2);
    expect(Math.abs((middle?.videos[0]?.duration_seconds ?? 0) - 1)).toBeLessThanOrEqual(0.1);
    expect(still?.images?.[0]).toMatchObject({ content_type: 'image/png', width: 192, height: 108 });
    expect(Math.abs((mixed?.videos[0]?.duration_seconds ?? 0) - 1)).toBeLessThanOrEqual(0.1);
    expect([cut, middle, still, mixed].map((r) => r?.request_id)).toEqual([
      'team/cut/op/1-concat',
      'team/cut/op/2-trim',
      'team/cut/op/3-frame',
      'mixed',
    ]);
    expect(mixed?.videos[0]?.file_name).toMatch(/^mixed-[0-9a-f]{12}\.mp4$/);
  });
});
