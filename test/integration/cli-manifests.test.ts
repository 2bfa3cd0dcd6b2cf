import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY } from '../helpers/local-service';
import { bundleReelflowWorkflows, startHarness, type Harness } from './workflow-harness';
import { runCli } from './cli-process';

/**
 * `reelflow batch` on malformed manifests, as a careless user writes them, against a real Temporal
 * dev server, the local service and a running worker: each exits 2 naming every bad row by line and
 * column, and nothing starts — no batch or pipeline workflow, no job at the service. A spec whose
 * input names the cloud metadata address is refused the same way by `reelflow batch` and `reelflow run`.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let dir: string;
let cliEnv: Record<string, string>;
const TASK_QUEUE = 'cli-manifests-test';

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-cli-manifests-'));
  fs.writeFileSync(path.join(dir, 'hero.png'), Buffer.from(PIXEL_PNG.split(',')[1] ?? '', 'base64'));
  fs.writeFileSync(
    path.join(dir, 'gen-only.json'),
    JSON.stringify({
      name: 'gen-only',
      steps: [
        {
          id: 'generate',
          model: LONG_FORM,
          input: { image_urls: ['hero.png'], prompt: 'base', duration: '4', resolution: '480p' },
        },
      ],
    }),
  );
  process.env.REELFLOW_MEDIA_STORE = `file://${path.join(dir, 'media')}`;
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE);
  cliEnv = {
    TEMPORAL_ADDRESS: env.address,
    REELFLOW_TASK_QUEUE: TASK_QUEUE,
    REELFLOW_SERVICE_URL: h.service.url,
    REELFLOW_API_KEY: TEST_API_KEY,
    REELFLOW_MEDIA_STORE: process.env.REELFLOW_MEDIA_STORE as string,
  };
}, 120_000);

afterAll(async () => {
  await h?.close();
  await env?.teardown();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  delete process.env.REELFLOW_MEDIA_STORE;
});

/** True when a workflow with that id exists (started, running or closed); a strongly consistent read. */
async function exists(workflowId: string): Promise<boolean> {
  try {
    await env.client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if ((error as Error).name === 'WorkflowNotFoundError') return false;
    throw error;
  }
}

const MALFORMED: Array<{ file: string; text: string; places: string[]; items: string[] }> = [
  {
    file: 'unquoted-comma.csv',
    text: 'spec,name,generate.prompt\ngen-only.json,item-a,A cat, in the rain, wide shot\ngen-only.json,item-b,fine\n',
    places: ['line 2, column 4'],
    items: ['item-a', 'item-b'],
  },
  {
    file: 'repeated-header.csv',
    text: 'spec,name,generate.prompt,generate.prompt\ngen-only.json,item-c,A cat,in the rain\n',
    places: ['line 1, column 4'],
    items: ['item-c'],
  },
  {
    file: 'empty-spec.csv',
    text: 'spec,name\ngen-only.json,item-d\n,item-e\n,item-f\n',
    places: ['line 3, column 1', 'line 4, column 1'],
    items: ['item-d', 'item-e', 'item-f'],
  },
  {
    file: 'short-row.csv',
    text: 'spec,name,generate.prompt\ngen-only.json,item-g\ngen-only.json,item-h,fine\ngen-only.json\n',
    places: ['line 2, column 3', 'line 4, column 2'],
    items: ['item-g', 'item-h'],
  },
  {
    file: 'not-json.jsonl',
    text: '{"spec": "gen-only.json", "name": "item-i"}\n{"spec": gen-only.json}\n\nnot json at all\n',
    places: ['line 2, column 10', 'line 4, column 1'],
    items: ['item-i'],
  },
  {
    file: 'metadata.csv',
    text: 'spec,name,generate.image_urls\ngen-only.json,item-j,\ngen-only.json,item-k,https://169.254.169.254/latest/meta-data\n',
    places: ['line 3, column 3: steps.0.input.image_urls.0: 169.254.169.254 is a metadata address'],
    items: ['item-j', 'item-k'],
  },
];

describe('reelflow batch refuses a malformed manifest whole', () => {
  it.each(MALFORMED)('$file: exit 2, every bad row by line and column, nothing started', async (c) => {
    const file = path.join(dir, c.file);
    fs.writeFileSync(file, c.text);
    const name = c.file.replace(/\.[^.]+$/, '');
    const result = await runCli(['batch', file, '--name', name], cliEnv);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
    expect(result.stderr).toContain('nothing was started');
    for (const place of c.places) expect(result.stderr).toContain(`  ${place}`);
    // Exactly the bad rows are listed, none twice.
    expect(result.stderr.split('\n').filter((line) => /^ {2}line /.test(line))).toHaveLength(c.places.length);
    expect(await exists(`batch/${name}`)).toBe(false);
    for (const item of c.items) expect(await exists(`pipeline/${item}`)).toBe(false);
  });

  it('reelflow run refuses a spec whose input names the metadata address with its field path, before it starts', async () => {
    const spec = path.join(dir, 'metadata-spec.json');
    fs.writeFileSync(
      spec,
      JSON.stringify({
        name: 'metadata-run',
        steps: [{ id: 'g', model: LONG_FORM, input: { image_urls: ['https://169.254.169.254/latest/meta-data'] } }],
      }),
    );
    const result = await runCli(['run', spec], cliEnv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('steps.0.input.image_urls.0: 169.254.169.254 is a metadata address');
    expect(await exists('pipeline/metadata-run')).toBe(false);
  });

  it('no job reached the service and no workflow ran on the task queue', async () => {
    expect(h.service.service.jobs()).toEqual([]);
    expect(h.calls.submit).toBe(0);
    const started: string[] = [];
    for await (const workflow of env.client.workflow.list({ query: `TaskQueue = '${TASK_QUEUE}'` }))
      started.push(workflow.workflowId);
    expect(started).toEqual([]);
  });
});
