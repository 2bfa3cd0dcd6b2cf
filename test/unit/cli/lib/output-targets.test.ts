import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { downloadOutputs } from '../../../../src/cli/commands/outputs';
import { outputTargets } from '../../../../src/cli/lib/output-targets';
import type { JobResult } from '../../../../src/contract';
import { createFileStore, putMediaBytes, type MediaStore } from '../../../../src/media/store';
import type { PipelineSummary, StepItemSummary, StepSummary } from '../../../../src/workflows/pipeline-types';

/** Names of `reelflow outputs` files: version 1 as before, a graph by node and item. */

function result(...urls: string[]): JobResult {
  return {
    request_id: 'r',
    status: 'COMPLETED',
    model: 'm',
    credits_used: 1,
    videos: urls.map((url) => ({ url, file_name: 'out.mp4', content_type: 'video/mp4' })),
  };
}

function row(id: string, overrides: Partial<StepSummary> = {}): StepSummary {
  return {
    id,
    model: 'service-video-cinema-long-form-from-references',
    status: 'completed',
    stepKey: `p/job/${id}`,
    requestIds: [],
    attempts: 1,
    quoted: 0,
    charged: 0,
    refunded: 0,
    polls: 0,
    ...overrides,
  } as StepSummary;
}

function item(index: number, output: JobResult | undefined, status: StepItemSummary['status'] = 'completed') {
  return { index, status, requestIds: [], charged: 0, refunded: 0, ...(output ? { output } : {}) };
}

function summary(steps: StepSummary[], outputs: PipelineSummary['outputs'], version?: 2): PipelineSummary {
  return {
    name: 'p',
    status: 'completed',
    currentStep: null,
    budgetCredits: null,
    ledger: { quoted: 0, charged: 0, refunded: 0, net: 0 },
    steps,
    outputs,
    ...(version ? { version } : {}),
  };
}

/** An image output as an operation (`frame`) records it. */
const frameOutput = (url: string) =>
  ({
    ...result(),
    model: 'op:frame',
    images: [{ url, file_name: 'frame.png', content_type: 'image/png' }],
  }) as JobResult;

describe('output names', () => {
  it('version 1 keeps <step>-<n> for every file of every step', () => {
    const names = outputTargets(
      summary([row('a'), row('b'), row('frame')], {
        a: result('https://s/a1.mp4'),
        b: result('https://s/b1.mp4', 'https://s/b2.mp4'),
        frame: frameOutput('https://s/frame'),
      }),
    ).map((t) => t.name);
    expect(names).toEqual(['a-1', 'b-1', 'b-2', 'frame-1']);
  });

  it('a graph names files by step and item; failed items have none; images come from an operation', () => {
    const scenes = row('scenes', {
      items: [
        item(0, result('https://s/0.mp4')),
        item(1, undefined, 'failed'),
        item(2, result('https://s/2.mp4')),
        item(3, result('https://s/3a.mp4', 'https://s/3b.mp4')),
      ],
    });
    const targets = outputTargets(
      summary(
        [scenes, row('cut'), row('frame'), row('gate'), row('upscale')],
        {
          cut: result('https://s/cut.mp4'),
          frame: frameOutput('https://s/frame'),
          gate: { decision: 'approved' } as unknown as JobResult,
          upscale: result('https://s/up.mp4'),
        },
        2,
      ),
    );
    expect(targets.map((t) => [t.name, t.step, t.item])).toEqual([
      ['scenes-0', 'scenes', 0],
      ['scenes-2', 'scenes', 2],
      ['scenes-3-1', 'scenes', 3],
      ['scenes-3-2', 'scenes', 3],
      ['cut', 'cut', undefined],
      ['frame', 'frame', undefined],
      ['upscale', 'upscale', undefined],
    ]);
    expect(targets[5]).toMatchObject({ url: 'https://s/frame', contentType: 'image/png' });
  });

  it('a step id that reads like another step’s item does not overwrite its file', () => {
    const names = outputTargets(
      summary(
        [row('a', { items: [item(1, result('https://s/a.mp4'))] }), row('a-1')],
        { 'a-1': result('https://s/a-1.mp4') },
        2,
      ),
    ).map((t) => t.name);
    expect(names).toEqual(['a-1', 'a-1_2']);
  });
});

describe('downloading a graph’s outputs', () => {
  let dir: string;
  let store: MediaStore;
  let server: http.Server;
  let origin: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-graph-outputs-'));
    store = createFileStore(path.join(dir, 'media'));
    server = http.createServer((request, response) => {
      const png = request.url === '/files/frame';
      response.writeHead(200, { 'content-type': png ? 'image/png' : 'video/mp4' });
      response.end(png ? 'png bytes' : `video at ${request.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('items come from their archived copies, nodes and the frame from the service, each named by step and item', async () => {
    const items = await Promise.all(
      [0, 1].map(async (index) => {
        const url = `${origin}/files/scene-${index}.mp4`;
        const ref = await putMediaBytes(store, Buffer.from(`archived scene ${index}`), 'video/mp4', 'pipeline/p');
        return { ...item(index, result(url)), archived: [{ ...ref, url, file_name: 'out.mp4' }] };
      }),
    );
    const graph = summary(
      [row('scenes', { items }), row('cut'), row('frame')],
      { cut: result(`${origin}/files/cut`), frame: frameOutput(`${origin}/files/frame`) },
      2,
    );
    const out = path.join(dir, 'out');
    const files = await downloadOutputs(graph, out, origin, store);
    expect(files.map((f) => [path.basename(f.file), f.from, f.item])).toEqual([
      ['scenes-0.mp4', 'archive', 0],
      ['scenes-1.mp4', 'archive', 1],
      ['cut.mp4', 'service', undefined],
      ['frame.png', 'service', undefined],
    ]);
    expect(fs.readFileSync(path.join(out, 'scenes-1.mp4'), 'utf8')).toBe('archived scene 1');
    expect(fs.readFileSync(path.join(out, 'cut.mp4'), 'utf8')).toBe('video at /files/cut');
    expect(fs.readFileSync(path.join(out, 'frame.png'), 'utf8')).toBe('png bytes');
    expect(fs.readdirSync(out).sort()).toEqual(['cut.mp4', 'frame.png', 'scenes-0.mp4', 'scenes-1.mp4']);
  });
});
