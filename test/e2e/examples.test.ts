import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startLocalStack, type LocalStack } from '../../src/stack/local-stack';
import { fetchAndCheck } from '../../src/stack/output-check';
import { STACK_ENDPOINT_EVENTS } from '../../src/stack/webhook-endpoint';
import { jsonOf, runCli } from '../integration/cli-process';

/**
 * Every example under examples/ as a user runs it: `reelflow run` / `reelflow batch` child processes
 * against the local stack (Temporal dev server, local service, bridge, worker) started here on free
 * ports from a clean state directory. Nothing leaves the machine: the examples' inputs are the files
 * under examples/media/ and earlier steps' outputs. Every output is downloaded and checked with ffprobe.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const EXAMPLES = path.join(ROOT, 'examples');
let stack: LocalStack;
let stateDir: string;
let env: Record<string, string>;

interface Summary {
  status: string;
  steps: Array<{ id: string; status: string; output?: { videos: Array<{ url: string }> } }>;
}

const specs = fs
  .readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.json'))
  .sort();
const manifests = fs
  .readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.csv'))
  .sort();

beforeAll(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-examples-'));
  stack = await startLocalStack({ stateDir, autoPorts: true, reuseRunning: false });
  // REELFLOW_STATE_DIR, as `reelflow dev` prints it: the CLI puts local files into the stack's media store.
  env = {
    TEMPORAL_ADDRESS: stack.temporalAddress,
    REELFLOW_TASK_QUEUE: stack.taskQueue,
    REELFLOW_SERVICE_URL: stack.serviceUrl,
    REELFLOW_API_KEY: stack.apiKey,
    REELFLOW_STATE_DIR: stack.paths.root,
  };
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
});

describe('examples/ on the local stack, offline', () => {
  it('ships at least the three-step example and a batch, with inputs that are files in the repository', () => {
    expect(specs).toEqual(expect.arrayContaining(['three-step.json']));
    expect(manifests.length).toBeGreaterThan(0);
    for (const file of specs) {
      const text = fs.readFileSync(path.join(EXAMPLES, file), 'utf8');
      // No input is fetched from outside: every URL field is a local path or a reference to an earlier step.
      expect({ file, remote: text.match(/"(https?|data):[^"]*"/g) ?? [] }).toEqual({ file, remote: [] });
    }
  });

  it('registers the stack’s webhook endpoint with completion, failure and cancel events', async () => {
    const response = await request(`${stack.serviceUrl}/v1/webhooks/endpoints`, {
      headers: { authorization: `Key ${stack.apiKey}` },
    });
    const { endpoints } = (await response.body.json()) as { endpoints: Array<{ url: string; events: string[] }> };
    expect(endpoints).toEqual([expect.objectContaining({ url: stack.bridgeUrl, events: [...STACK_ENDPOINT_EVENTS] })]);
  });

  it.each(specs)(
    'reelflow run examples/%s completes, every output a playable video',
    async (file) => {
      const run = await runCli(['run', path.join('examples', file), '--json'], env, { cwd: ROOT });
      expect({ code: run.code, stderr: run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
      const summary = jsonOf<Summary>(run);
      expect(summary.status).toBe('completed');
      for (const step of summary.steps) {
        expect(step.status).toBe('completed');
        const url = step.output?.videos[0]?.url as string;
        const checked = await fetchAndCheck(step.id, url, path.join(stateDir, 'checked', file));
        expect({ step: step.id, problems: checked.problems }).toEqual({ step: step.id, problems: [] });
      }
    },
    180_000,
  );

  it.each(manifests)(
    'reelflow batch examples/%s completes every item',
    async (file) => {
      const run = await runCli(['batch', path.join('examples', file), '--json'], env, { cwd: ROOT });
      expect({ code: run.code, stderr: run.stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
      const progress = jsonOf<{ status: string; total: number; completed: number }>(run);
      expect(progress).toMatchObject({ status: 'completed', completed: progress.total });
      expect(progress.total).toBeGreaterThan(0);
    },
    180_000,
  );

  it('a job the service fails after acceptance shows error.code and error.message in `reelflow status` within 10 s (failure events of the local stack)', async () => {
    // `.invalid` never resolves; --no-preflight lets the service accept the job and refuse the input itself.
    const spec = path.join(stateDir, 'refused.json');
    fs.writeFileSync(
      spec,
      JSON.stringify({
        name: 'stack-refused',
        steps: [
          {
            id: 'generate',
            model: 'service-video-cinema-long-form-from-references',
            input: { image_urls: ['https://reelflow-example.invalid/hero.png'] },
          },
        ],
      }),
    );
    // No early status check: the reason must come by the failure event alone.
    const quiet = { ...env, REELFLOW_EARLY_STATUS_CHECK_SECONDS: '0' };
    const started = await runCli(['run', spec, '--no-preflight', '--detach'], quiet, { cwd: ROOT });
    expect(started.code).toBe(0);
    let shown = '';
    const deadline = Date.now() + 90_000;
    while (!/input_refused/.test(shown) && Date.now() < deadline) {
      shown = (await runCli(['status', 'stack-refused'], quiet, { cwd: ROOT })).stdout;
    }
    expect(shown).toMatch(
      /attempt 1 \S+ FAILED: input_refused: image_urls\.0: host reelflow-example\.invalid does not resolve/,
    );
    type Step = { polls: number; submittedAt: number; finishedAt: number; attemptLog: Array<{ learnedBy: string }> };
    const summary = jsonOf<{ progress: { steps: Step[] } }>(
      await runCli(['status', 'stack-refused', '--json'], quiet, { cwd: ROOT }),
    );
    const step = summary.progress.steps[0] as Step;
    expect(step).toMatchObject({ polls: 0, attemptLog: [{ learnedBy: 'webhook' }] });
    // Submit answered → reason known, in workflow time (a CLI process takes seconds to start on this loaded
    // machine, so wall time between two commands says little). Without the event: the first poll at 180 s.
    expect(step.finishedAt - step.submittedAt).toBeLessThan(10_000);
  }, 120_000);
});
