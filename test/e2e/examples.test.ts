import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { request } from 'undici';
import { startLocalStack, type LocalStack } from '../../src/stack/local-stack';
import { fetchAndCheck } from '../../src/stack/output-check';
import { STACK_ENDPOINT_EVENTS } from '../../src/stack/webhook-endpoint';
import { jsonOf, runCli } from '../integration/cli-process';
import { probe } from '../../src/media/ffmpeg';
import { download } from '../../src/stack/output-check';
import { ensureAdminKey } from '../../src/stack/stack-state';
import type { JobClocks } from '../../src/local-service/routes/clocks';

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
/** Examples with an approval gate: run by their own tests below, which decide the gate. */
const GATED = ['long-ad.json', 'variants.json'];
const ungated = specs.filter((file) => !GATED.includes(file));
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

  it.each(ungated)(
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

  describe('the long ad (examples/long-ad.json with 4 s scenes)', () => {
    /** The example with short scenes, its local inputs as absolute paths, under `name`. */
    const shortAd = (name: string): string => {
      const spec = JSON.parse(fs.readFileSync(path.join(EXAMPLES, 'long-ad.json'), 'utf8')) as {
        name: string;
        steps: Array<{ id: string; input: Record<string, unknown> }>;
      };
      spec.name = name;
      const [scenes, , revoice] = spec.steps;
      scenes!.input.duration = '4';
      scenes!.input.image_urls = (scenes!.input.image_urls as string[]).map((p) => path.join(EXAMPLES, p));
      revoice!.input.audio_url = path.join(EXAMPLES, revoice!.input.audio_url as string);
      const file = path.join(stateDir, `${name}.json`);
      fs.writeFileSync(file, JSON.stringify(spec));
      return file;
    };
    type Progress = {
      status: string;
      steps: Array<{ id: string; status: string; phase?: string; output?: { videos?: Array<{ url: string }> } }>;
      itemOutputs?: Record<string, Array<{ videos: Array<{ url: string }> }>>;
    };
    const progressOf = async (name: string): Promise<Progress> =>
      jsonOf<{ progress: Progress }>(await runCli(['status', name, '--json'], env, { cwd: ROOT })).progress;
    /** Polls `reelflow status` until `done` holds (or throws after `ms`). */
    const until = async (name: string, done: (p: Progress) => boolean, ms = 240_000): Promise<Progress> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const progress = await progressOf(name);
        if (done(progress)) return progress;
        if (Date.now() > deadline) throw new Error(`${name}: ${JSON.stringify(progress.steps.map((s) => s.status))}`);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    };
    const gateWaits = (p: Progress) => p.steps.find((s) => s.id === 'review')?.status === 'running';
    const jobsOf = async (name: string): Promise<JobClocks[]> => {
      const response = await request(`${stack.serviceUrl}/v1/admin/jobs`, {
        headers: { authorization: `Key ${ensureAdminKey(stack.paths).key}` },
      });
      const { jobs } = (await response.body.json()) as { jobs: JobClocks[] };
      return jobs.filter((job) => job.idempotencyKey?.includes(`:${name}/job/`));
    };

    it('approved: scenes at once, one cut as long as the scenes, re-voiced and upscaled to twice their height', async () => {
      const started = await runCli(['run', shortAd('long-ad-approve'), '--detach'], env, { cwd: ROOT });
      expect({ code: started.code, stderr: started.stderr.slice(-2000) }).toEqual({
        code: 0,
        stderr: expect.any(String),
      });
      await until('long-ad-approve', gateWaits);
      const approved = await runCli(['approve', 'long-ad-approve', 'review'], env, { cwd: ROOT });
      expect({ code: approved.code, stderr: approved.stderr }).toEqual({ code: 0, stderr: '' });
      const done = await until('long-ad-approve', (p) => p.status !== 'running');
      expect(done.status).toBe('completed');

      const dir = path.join(stateDir, 'long-ad');
      fs.mkdirSync(dir, { recursive: true });
      const probed = async (url: string, file: string) => {
        await download(url, path.join(dir, file));
        return probe(path.join(dir, file));
      };
      const scenes = await Promise.all(
        (done.itemOutputs?.scenes ?? []).map((o, i) => probed(o.videos[0]!.url, `scene-${i}.mp4`)),
      );
      expect(scenes).toHaveLength(4);
      const upscaled = done.steps.find((s) => s.id === 'upscale')?.output?.videos?.[0]?.url as string;
      const final = await probed(upscaled, 'final.mp4');
      const sum = scenes.reduce((total, scene) => total + scene.duration, 0);
      expect(Math.abs(final.duration - sum)).toBeLessThanOrEqual(0.5);
      expect(final.height).toBe(2 * (scenes[0]?.height ?? 0));
      expect(final.streams.some((stream) => stream.codecType === 'audio')).toBe(true);

      // The service ran two or more scenes at once (its own clocks).
      const longForm = (await jobsOf('long-ad-approve')).filter((job) => job.idempotencyKey?.includes('/job/scenes/'));
      const atOnce = Math.max(
        ...longForm
          .map((job) =>
            longForm.filter(
              (other) =>
                other.startedAt !== null &&
                job.startedAt !== null &&
                other.startedAt <= job.startedAt &&
                (other.completedAt ?? Infinity) > job.startedAt,
            ),
          )
          .map((overlapping) => overlapping.length),
      );
      expect(longForm).toHaveLength(4);
      expect(atOnce).toBeGreaterThanOrEqual(2);
    }, 300_000);

    it('rejected: the pipeline reads rejected and nothing after the gate reached the service', async () => {
      const started = await runCli(['run', shortAd('long-ad-reject'), '--detach'], env, { cwd: ROOT });
      expect(started.code).toBe(0);
      await until('long-ad-reject', gateWaits);
      const rejected = await runCli(['reject', 'long-ad-reject', 'review', '--reason', 'wrong logo'], env, {
        cwd: ROOT,
      });
      expect(rejected.code).toBe(0);
      const done = await until('long-ad-reject', (p) => p.status !== 'running');
      expect(done.status).toBe('rejected');
      const keys = (await jobsOf('long-ad-reject')).map((job) => job.idempotencyKey);
      expect(keys.some((key) => key?.includes('/job/upscale'))).toBe(false);
      expect(keys.filter((key) => key?.includes('/job/scenes/'))).toHaveLength(4);
    }, 300_000);
  });
});
