import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { EVENT_TYPES, LOCAL_PER_SECOND_RATES, LONG_FORM_PRICES, pricePerSecond } from '../../src/contract';
import { probe } from '../../src/media/ffmpeg';
import { pipelineProgressQuery, SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import type { ApprovalStepFields, PipelineSummary, StepSummary } from '../../src/workflows/pipeline-types';
import { answeredFrontendRequests, startDevServer } from '../helpers/temporal';
import { freePort } from '../../src/stack/stack-state';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY } from '../helpers/local-service';
import {
  bundleReelflowWorkflows,
  eventually,
  maybeRecordHistory,
  silentWavDataUri,
  startHarness,
  startTestBridge,
  type Harness,
  type TestBridge,
} from './workflow-harness';
import { jsonOf, runCli } from './cli-process';

/**
 * The CLI as a person or script runs it: `node bin/reelflow.js ...` child processes against a real
 * Temporal dev server, the real local service and a real reelflow worker (one of each for the file).
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
let dir: string;
let cliEnv: Record<string, string>;
let metricsPort: number;
const TASK_QUEUE = 'cli-commands-test';

/** A three-step spec whose reference image and voice track are local files next to it. */
function writeThreeStepSpec(name: string): string {
  const spec = {
    name,
    steps: [
      {
        id: 'generate',
        model: LONG_FORM,
        input: { image_urls: ['hero.png'], prompt: 'cli test', duration: '4', resolution: '480p' },
      },
      {
        id: 'revoice',
        model: 'service-horizon-studio',
        input: { video_url: { $from: 'generate' }, audio_url: 'voice.wav' },
      },
      {
        id: 'upscale',
        model: 'service-upscale-video-fast',
        input: { video_url: { $from: 'revoice', path: 'videos[0].url' } },
      },
    ],
  };
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(spec, null, 2));
  return file;
}

function writeJson(name: string, value: unknown): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-cli-'));
  fs.writeFileSync(path.join(dir, 'hero.png'), Buffer.from(PIXEL_PNG.split(',')[1] ?? '', 'base64'));
  fs.writeFileSync(path.join(dir, 'voice.wav'), Buffer.from(silentWavDataUri(2).split(',')[1] ?? '', 'base64'));
  // The worker (this process) and the CLI (child processes) share one media store.
  process.env.REELFLOW_MEDIA_STORE = `file://${path.join(dir, 'media')}`;
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    freePort().then((port) => {
      metricsPort = port;
      return startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS, metricsPort });
    }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, { concurrencyPerModel: 2 });
  // Completions only (the spec's one event kind): a service that sends no failure events, so the early status check is what finds a refused job.
  bridge = await startTestBridge(h.service, env, TASK_QUEUE, { events: [EVENT_TYPES.completed] });
  cliEnv = {
    TEMPORAL_ADDRESS: env.address,
    REELFLOW_TASK_QUEUE: TASK_QUEUE,
    REELFLOW_SERVICE_URL: h.service.url,
    REELFLOW_API_KEY: TEST_API_KEY,
    REELFLOW_MEDIA_STORE: process.env.REELFLOW_MEDIA_STORE as string,
  };
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  delete process.env.REELFLOW_MEDIA_STORE;
});

describe('reelflow CLI against a dev server, the local service and a worker', () => {
  it('run --json follows the three-step pipeline (local files put into the media store); status and outputs then read it', async () => {
    const spec = writeThreeStepSpec('cli-three');
    const run = await runCli(['run', spec, '--json'], cliEnv);
    expect(run.stderr).toContain('started pipeline/cli-three');
    expect(run.code).toBe(0);
    const summary = jsonOf(run);
    expect(summary.workflowId).toBe('pipeline/cli-three');
    expect(summary.status).toBe('completed');
    expect(summary.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed', 'completed']);
    // Local files travel as media-store references, never as bytes.
    expect(summary.steps[0].input.image_urls[0]).toMatchObject({
      $media: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      type: 'image/png',
    });
    expect(summary.steps[1].input.audio_url).toMatchObject({
      $media: expect.stringMatching(/^sha256:/),
      type: 'audio/wav',
    });
    expect(run.stdout).not.toContain('data:');
    expect(summary.ledger.net).toBeGreaterThan(0);

    const status = await runCli(['status', 'cli-three', '--json'], cliEnv);
    expect(status.code).toBe(0);
    expect(jsonOf(status)).toMatchObject({
      kind: 'pipeline',
      workflowId: 'pipeline/cli-three',
      temporalStatus: 'COMPLETED',
      progress: { status: 'completed' },
    });
    const statusText = await runCli(['status', 'pipeline/cli-three'], cliEnv);
    expect(statusText.code).toBe(0);
    for (const step of ['generate', 'revoice', 'upscale'])
      expect(statusText.stdout).toMatch(new RegExp(`${step}\\s+completed\\s+\\S+`));

    const out = path.join(dir, 'out');
    const outputs = await runCli(['outputs', 'pipeline/cli-three', '--to', out, '--json'], cliEnv);
    expect(outputs.code).toBe(0);
    const files = jsonOf(outputs).files as Array<{ step: string; file: string; bytes: number }>;
    expect(files.map((f) => f.step)).toEqual(['generate', 'revoice', 'upscale']);
    for (const f of files) {
      expect(fs.statSync(f.file).size).toBe(f.bytes);
      const probed = await probe(f.file);
      expect(probed.streams.some((s) => s.codecType === 'video')).toBe(true);
      expect(probed.duration).toBeGreaterThan(3);
    }
  });

  it('run without --json prints progress per step (state, request id, elapsed, credits) and the output URL', async () => {
    const spec = writeJson('cli-text.json', {
      name: 'cli-text',
      steps: [{ id: 'generate', model: LONG_FORM, input: { image_urls: ['hero.png'], duration: '4' } }],
    });
    // The job stays IN_PROGRESS for 15 s, so the follower (one query a second) sees it running even when a
    // loaded machine stretches its second to three (5× margin).
    h.service.service.setFaults({ modelDurationMs: 15_000 });
    const answeredQueries = () => answeredFrontendRequests(metricsPort, 'QueryWorkflow');
    const queriesBefore = await answeredQueries();
    const run = await runCli(['run', spec], cliEnv).finally(() => h.service.service.setFaults({ modelDurationMs: 0 }));
    expect(run.code).toBe(0);
    // The follower asks for progress only when the pipeline's state changed (a workflow task completed),
    // never on a clock and never after the close: at most one query per completed task, where a query a
    // second would have sent one for each of the job's 15 s. Counted are the queries answered: one that
    // failed (a query racing the task that closes the pipeline) the client's gRPC layer may send again.
    const queries = (await answeredQueries()) - queriesBefore;
    const history = await env.client.workflow.getHandle('pipeline/cli-text').fetchHistory();
    const tasksCompleted = (history.events ?? []).filter((e) => e.workflowTaskCompletedEventAttributes).length;
    expect(queries).toBeGreaterThan(0);
    expect(queries).toBeLessThanOrEqual(tasksCompleted - 1);
    expect(run.stdout).toContain('started pipeline/cli-text');
    expect(run.stdout).toMatch(/generate\s+running(\/[a-z-]+)?\s+\S+/);
    const price = LONG_FORM_PRICES['4']['480p standard'];
    expect(run.stdout).toMatch(new RegExp(`generate\\s+completed\\s+\\S+\\s+\\d+\\.\\ds\\s+${price} credits`));
    expect(run.stdout).toMatch(new RegExp(`pipeline/cli-text: completed {2}elapsed \\d+\\.\\ds`));
    expect(run.stdout).toContain(`output: ${h.service.url}/files/`);
  });

  it('quote prints each step and the total; the long-form price matches the contract table', async () => {
    const spec = writeThreeStepSpec('cli-quote');
    const jobsBefore = h.service.service.jobs().length;
    const balanceBefore = h.service.service.balance();
    const quoted = await runCli(['quote', spec, '--json'], cliEnv);
    expect(quoted.code).toBe(0);
    const quote = jsonOf(quoted);
    const longForm = LONG_FORM_PRICES['4']['480p standard'];
    const revoice = pricePerSecond(LOCAL_PER_SECOND_RATES['service-horizon-studio'].standard, 4);
    const upscale = pricePerSecond(LOCAL_PER_SECOND_RATES['service-upscale-video-fast'].standard, 4);
    expect(quote.steps).toEqual([
      expect.objectContaining({ step: 'generate', credits: longForm, basis: 'quote', dependsOn: null }),
      expect.objectContaining({ step: 'revoice', credits: revoice, basis: 'estimate', dependsOn: 'generate' }),
      expect.objectContaining({ step: 'upscale', credits: upscale, basis: 'estimate', dependsOn: 'revoice' }),
    ]);
    expect(quote).toMatchObject({ total: longForm + revoice + upscale, exact: false, incomplete: false });

    const text = await runCli(['quote', spec], cliEnv);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`generate\\s+${LONG_FORM}\\s+${longForm} credits\\s+\\(quote\\)`));
    expect(text.stdout).toMatch(
      new RegExp(`revoice .* ${revoice} credits\\s+\\(~ estimate; depends on step generate output`),
    );
    expect(text.stdout).toContain(`total: ${longForm + revoice + upscale} credits (includes estimates)`);
    // Quoting spent nothing.
    expect(h.service.service.jobs().length).toBe(jobsBefore);
    expect(h.service.service.balance()).toBe(balanceBefore);
  });

  it('quote --batch totals a manifest: exact and estimated credits apart, and no quote call for what the price table prices', async () => {
    const spec = writeThreeStepSpec('cli-quote-batch');
    const manifest = path.join(dir, 'quote-batch.csv');
    fs.writeFileSync(
      manifest,
      `spec,name\n${path.basename(spec)},qb-1\n${path.basename(spec)},qb-2\n${path.basename(spec)},qb-3\n`,
    );
    const quotesBefore = h.service.service.counters().quoteCalls;
    const jobsBefore = h.service.service.jobs().length;
    const quoted = await runCli(['quote', '--batch', manifest, '--json'], cliEnv);
    expect(quoted.code).toBe(0);
    const quote = jsonOf(quoted);
    const longForm = LONG_FORM_PRICES['4']['480p standard'];
    const revoice = pricePerSecond(LOCAL_PER_SECOND_RATES['service-horizon-studio'].standard, 4);
    const upscale = pricePerSecond(LOCAL_PER_SECOND_RATES['service-upscale-video-fast'].standard, 4);
    expect(quote).toMatchObject({
      name: 'quote-batch',
      exactCredits: 3 * longForm,
      estimatedCredits: 3 * (revoice + upscale),
      total: 3 * (longForm + revoice + upscale),
      unknownSteps: 0,
      quoteCalls: 0,
    });
    expect((quote.items as { name: string }[]).map((item) => item.name)).toEqual(['qb-1', 'qb-2', 'qb-3']);
    // Priced by the contract's table: the service was not asked, and nothing was spent.
    expect(h.service.service.counters().quoteCalls).toBe(quotesBefore);
    expect(h.service.service.jobs().length).toBe(jobsBefore);

    const text = await runCli(['quote', '--batch', manifest], cliEnv);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('quote for batch quote-batch (3 items');
    expect(text.stdout).toMatch(
      new RegExp(`generate\\s+${LONG_FORM}\\s+price-table\\s+${3 * longForm} credits over 3 item`),
    );
    expect(text.stdout).toContain(`exact: ${3 * longForm} credits`);
    expect(text.stdout).toContain(`estimated: ${3 * (revoice + upscale)} credits`);
    expect(text.stdout).toContain(
      `total: ${3 * (longForm + revoice + upscale)} credits (includes estimates); 0 quote call(s)`,
    );

    const both = await runCli(['quote', spec, '--batch', manifest], cliEnv);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/either a spec file or --batch/);
  });

  it('run --detach prints the id; cancel waits for the close and reports every step', async () => {
    // The first job runs long, so the cancel finds it running however quickly the CLI starts.
    h.service.service.setFaults({ modelDurationMs: { [LONG_FORM]: 120_000 } });
    try {
      const spec = writeThreeStepSpec('cli-cancel');
      const started = await runCli(['run', spec, '--detach'], cliEnv);
      expect(started.code).toBe(0);
      expect(started.stdout.trim()).toBe('pipeline/cli-cancel');
      const cancelled = await runCli(['cancel', 'pipeline/cli-cancel', '--json'], cliEnv);
      expect(cancelled.code).toBe(0);
      const report = jsonOf(cancelled);
      expect(report.temporalStatus).toBe('CANCELLED');
      expect(report.progress.status).toBe('cancelled');
      expect(report.progress.steps.map((s: { status: string }) => s.status)).toEqual([
        'cancelled',
        'skipped',
        'skipped',
      ]);
      // At the service: the first step's job was cancelled and its charge refunded in the credit ledger; no other job exists.
      const jobs = h.service.service.jobs().filter((j) => j.idempotencyKey?.includes('cli-cancel/job/'));
      expect(jobs.map((j) => [j.idempotencyKey?.includes('cli-cancel/job/generate:'), j.status])).toEqual([
        [true, 'CANCELLED'],
      ]);
      const job = jobs[0]!;
      expect(
        h.service.service
          .ledger()
          .filter((e) => e.requestId === job.id)
          .map((e) => [e.kind, e.amount]),
      ).toEqual([
        ['charge', -job.creditsCharged],
        ['refund', job.creditsCharged],
      ]);
      expect(report.progress.ledger).toMatchObject({
        charged: job.creditsCharged,
        refunded: job.creditsCharged,
        net: 0,
      });
      const status = await runCli(['status', 'pipeline/cli-cancel'], cliEnv);
      expect(status.stdout).toContain('pipeline/cli-cancel: cancelled');
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
  });

  it("budget, retry and cancel --step send the operator updates; refusals exit 2 with the validator's reason", async () => {
    h.service.service.setFaults({ modelDurationMs: { [LONG_FORM]: 120_000 } });
    try {
      const file = writeThreeStepSpec('cli-operator');
      fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), budgetCredits: 500 }));
      expect((await runCli(['run', file, '--detach'], cliEnv)).code).toBe(0);
      await eventually(async () => {
        const status = jsonOf(await runCli(['status', 'pipeline/cli-operator', '--json'], cliEnv));
        return status.progress?.steps?.[0]?.requestIds?.length === 1;
      }, 'the generate step to be submitted');
      const low = await runCli(['budget', 'pipeline/cli-operator', '400'], cliEnv);
      // Code and stderr together, so a failure shows what the CLI said.
      expect({ code: low.code, stderr: low.stderr }).toEqual({
        code: 2,
        stderr: expect.stringContaining(
          'raiseBudget refused by pipeline/cli-operator: credits: 400 does not raise the current budget of 500 credits',
        ),
      });
      const raised = await runCli(['budget', 'cli-operator', '900', '--json'], cliEnv);
      expect({ code: raised.code, stderr: raised.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      expect(jsonOf(raised).message).toMatch(/^budget raised from 500 to 900 credits/);
      const retry = await runCli(['retry', 'pipeline/cli-operator', 'generate'], cliEnv);
      expect({ code: retry.code, stderr: retry.stderr }).toEqual({
        code: 2,
        stderr: expect.stringContaining(
          'retryStep refused by pipeline/cli-operator: step: generate is running (waiting), not waiting to resubmit',
        ),
      });
      const cancelled = await runCli(
        ['cancel', 'pipeline/cli-operator', '--step', 'generate', '--reason', 'cli test', '--json'],
        cliEnv,
      );
      expect({ code: cancelled.code, stderr: cancelled.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      const report = jsonOf(cancelled);
      expect(report.progress.status).toBe('cancelled');
      expect(report.progress.budgetCredits).toBe(900);
      expect(report.progress.steps.map((s: { status: string }) => s.status)).toEqual([
        'cancelled',
        'skipped',
        'skipped',
      ]);
      expect(report.progress.steps[0].error).toBe('cancelled by an operator: cli test');
      // A closed pipeline takes no update.
      const late = await runCli(['cancel', 'pipeline/cli-operator', '--step', 'upscale'], cliEnv);
      expect({ code: late.code, stderr: late.stderr }).toEqual({
        code: 1,
        stderr: expect.stringContaining(
          'pipeline/cli-operator has closed (failed); cancelStep applies to running pipelines only',
        ),
      });
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
  });

  it('approve and reject decide an approval gate: exit codes, the gate in status, and a rejected pipeline (exit 1, nothing after the gate)', async () => {
    const gated = (name: string) =>
      writeJson(`${name}.json`, {
        name,
        steps: [
          { id: 'generate', model: LONG_FORM, input: { image_urls: ['hero.png'], duration: '4', resolution: '480p' } },
          { id: 'review', op: 'approval', input: { preview: { $from: 'generate' }, note: 'logo visible?' } },
          {
            id: 'upscale',
            model: 'service-upscale-video-fast',
            input: { video_url: { $from: 'review', path: 'preview' } },
          },
        ],
      });
    // Read through the client, not the CLI: each CLI start costs seconds on a loaded machine.
    const progress = (id: string) =>
      env.client.workflow
        .getHandle(id)
        .query(pipelineProgressQuery)
        .catch(() => undefined);
    const waiting = (id: string) =>
      eventually(async () => (await progress(id))?.steps[1]?.phase === 'person', `${id}'s gate to wait for a person`);
    expect((await runCli(['run', gated('cli-gate-approve'), '--detach'], cliEnv)).code).toBe(0);
    // This one is followed by `reelflow run` until it ends.
    const following = runCli(['run', gated('cli-gate-reject')], cliEnv);
    await Promise.all([waiting('pipeline/cli-gate-approve'), waiting('pipeline/cli-gate-reject')]);

    // The console shows the gate: waiting for a person, its preview and the two commands that decide it.
    const status = await runCli(['status', 'cli-gate-approve'], cliEnv);
    expect(status.stdout).toMatch(/review\s+waiting for a person/);
    expect(status.stdout).toMatch(new RegExp(`preview: ${h.service.url}/files/\\S+`));
    expect(status.stdout).toContain('approve: reelflow approve pipeline/cli-gate-approve review');
    expect(status.stdout).toContain('reject:  reelflow reject pipeline/cli-gate-approve review --reason "<why>"');

    const outcome = (r: { code: number | null; stdout: string; stderr: string }) => ({
      code: r.code,
      out: r.stdout + r.stderr,
    });
    expect(outcome(await runCli(['approve', 'cli-gate-approve', 'nope'], cliEnv))).toEqual({
      code: 2,
      out: expect.stringContaining(
        'step: no step "nope" in pipeline/cli-gate-approve (approval gates of pipeline/cli-gate-approve: review)',
      ),
    });
    expect(outcome(await runCli(['approve', 'cli-gate-approve', 'upscale'], cliEnv))).toEqual({
      code: 2,
      out: expect.stringContaining('step: upscale is not an approval gate'),
    });
    expect(outcome(await runCli(['reject', 'cli-gate-reject', 'review'], cliEnv))).toEqual({
      code: 2,
      out: expect.stringContaining("required option '--reason <text>' not specified"),
    });

    expect(outcome(await runCli(['approve', 'cli-gate-approve', 'review', '--by', 'ann'], cliEnv))).toEqual({
      code: 0,
      out: expect.stringContaining('pipeline/cli-gate-approve: step review approved'),
    });
    const rejected = await runCli(
      ['reject', 'pipeline/cli-gate-reject', 'review', '--reason', 'wrong logo', '--json'],
      cliEnv,
    );
    expect({ code: rejected.code, stderr: rejected.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(jsonOf(rejected).message).toMatch(/review rejected/);

    const done = await Promise.all(
      ['pipeline/cli-gate-approve', 'pipeline/cli-gate-reject'].map(async (id) => {
        await env.client.workflow
          .getHandle(id)
          .result()
          .catch(() => undefined);
        return (await progress(id)) as PipelineSummary;
      }),
    );
    expect(done[0]?.status).toBe('completed');
    expect((done[0]?.steps[1] as StepSummary & ApprovalStepFields).approval.decision).toMatchObject({
      decision: 'approve',
      by: 'ann',
    });
    expect(done[1]?.status).toBe('rejected');
    expect(done[1]?.steps.map((s) => s.status)).toEqual(['completed', 'rejected', 'skipped']);
    // Nothing after the gate reached the service.
    expect(done[1]?.steps[2]?.requestIds).toEqual([]);
    expect(h.service.service.jobs().filter((j) => j.idempotencyKey?.includes('cli-gate-reject/job/'))).toHaveLength(1);
    // The follower showed the waiting gate with its preview and the two commands, then exits 1 on the rejection.
    const followed = await following;
    expect(followed.code).toBe(1);
    expect(followed.stdout).toMatch(new RegExp(`preview: ${h.service.url}/files/\\S+`));
    expect(followed.stdout).toContain('approve: reelflow approve pipeline/cli-gate-reject review');
    expect(followed.stdout).toContain('reject:  reelflow reject pipeline/cli-gate-reject review --reason "<why>"');
    expect(followed.stdout).toMatch(/review\s+rejected by \S+: wrong logo/);
    const shown = await runCli(['status', 'cli-gate-reject'], cliEnv);
    expect(shown.stdout).toMatch(/pipeline\/cli-gate-reject: rejected/);
    expect(shown.stdout).toMatch(/review\s+rejected by \S+: wrong logo/);
  });

  it('an invalid spec exits 2 naming the path and the reason; nothing is started', async () => {
    const spec = writeJson('cli-invalid.json', {
      name: 'cli-invalid',
      steps: [
        { id: 'generate', model: LONG_FORM, input: { image_urls: [PIXEL_PNG], duration: '7' } },
        {
          id: 'revoice',
          model: 'service-horizon-studio',
          input: { video_url: { $from: 'later' }, audio_url: 'missing.wav' },
        },
      ],
    });
    const result = await runCli(['run', spec], cliEnv);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('steps.1.input.audio_url');
    expect(result.stderr).toContain('missing.wav');
    const fixed = writeJson('cli-invalid2.json', {
      name: 'cli-invalid',
      steps: [
        { id: 'generate', model: LONG_FORM, input: { image_urls: [PIXEL_PNG], duration: '7' } },
        {
          id: 'revoice',
          model: 'service-horizon-studio',
          input: { video_url: { $from: 'later' }, audio_url: PIXEL_PNG },
        },
      ],
    });
    const second = await runCli(['run', fixed], cliEnv);
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/steps\.0\.input\.duration: /);
    expect(second.stderr).toMatch(/steps\.1\.input\.video_url\.\$from: must name an earlier step/);
    const status = await runCli(['status', 'cli-invalid'], cliEnv);
    expect(status.code).toBe(4);
  });

  it('status, cancel and outputs of an unknown id exit 4 and say which ids were tried', async () => {
    for (const command of [
      ['status', 'nope'],
      ['cancel', 'pipeline/nope'],
      ['outputs', 'nope', '--to', path.join(dir, 'x')],
    ]) {
      const result = await runCli(command, cliEnv);
      expect(result.code).toBe(4);
      expect(result.stderr).toContain('no pipeline or batch with id');
    }
  });

  it('batch runs a JSON manifest with a concurrency bound; --rerun-failed runs only the failed item again', async () => {
    const one = (name: string, budgetCredits?: number) => ({
      name,
      ...(budgetCredits ? { budgetCredits } : {}),
      steps: [{ id: 'generate', model: LONG_FORM, input: { image_urls: ['hero.png'], duration: '4' } }],
    });
    writeJson('item-a.json', one('cli-batch-a'));
    // A budget below the quote: refused before anything is submitted.
    const manifest = writeJson('manifest.json', { name: 'cli-batch', items: ['item-a.json', one('cli-batch-b', 10)] });
    const result = await runCli(['batch', manifest, '--concurrency', '2', '--json'], cliEnv);
    expect(result.code).toBe(1);
    const progress = jsonOf(result);
    expect(progress).toMatchObject({
      workflowId: 'batch/cli-batch',
      status: 'completed',
      total: 2,
      completed: 1,
      failed: 1,
    });
    const byName = (results: Array<{ name: string; status: string }>) => results.map((r) => [r.name, r.status]).sort();
    expect(byName(progress.results)).toEqual([
      ['cli-batch-a', 'completed'],
      ['cli-batch-b', 'failed'],
    ]);

    // The earlier batch's manifest and result pages are in the media store: no manifest file needed.
    const rerun = await runCli(['batch', '--rerun-failed', 'batch/cli-batch', '--json'], cliEnv);
    expect(rerun.stderr).toContain('re-running 1 of 2');
    const again = jsonOf(rerun);
    expect(again).toMatchObject({ workflowId: 'batch/cli-batch-rerun', total: 1, completed: 0, failed: 1 });
    expect(byName(again.results)).toEqual([['cli-batch-b', 'failed']]);
    expect(rerun.code).toBe(1);

    const status = await runCli(['status', 'batch/cli-batch'], cliEnv);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/\[#+\] 2\/2 {2}completed 1 {2}failed 1/);
    // Counts by state, items/s, ETA and credits, as the Temporal UI's current details show them.
    expect(status.stdout).toMatch(/2\/2 finished: completed 1 · failed 1 · cancelled 0 · skipped 0 · running 0/);
    expect(status.stdout).toMatch(/rate [\d.]+ items\/s · ETA 0\.0 s/);
    expect(status.stdout).toMatch(/credits \d+ net \(\d+ charged, 0 refunded\)/);

    // The final output of every completed item, from the archive; a second run finds it there already.
    const out = path.join(dir, 'batch-outputs');
    const outputs = await runCli(['outputs', 'batch/cli-batch', '--to', out, '--json'], cliEnv);
    expect(outputs.code).toBe(1); // one item has no output
    expect(jsonOf(outputs)).toMatchObject({ notCompleted: 1, files: [{ name: 'cli-batch-a', from: 'archive' }] });
    expect(fs.readdirSync(out)).toEqual(['cli-batch-a.mp4']);
    const resumed = await runCli(['outputs', 'batch/cli-batch', '--to', out, '--json'], cliEnv);
    expect(jsonOf(resumed).files).toEqual([expect.objectContaining({ name: 'cli-batch-a', from: 'skipped' })]);
    expect(resumed.stderr).toMatch(/\[#+\] 1\/1 outputs {2}1 already there/);
  });

  it("a pipeline the account cannot pay for exits 1 with the service's reason and a hint; nothing is charged", async () => {
    // A second service and worker on the same dev server: an account holding less than one job's price.
    const price = LONG_FORM_PRICES['4']['480p standard'];
    const poor = await startHarness(env, bundle, `${TASK_QUEUE}-poor`, { credits: price - 1 });
    try {
      const spec = writeJson('cli-poor.json', {
        name: 'cli-poor',
        steps: [{ id: 'generate', model: LONG_FORM, input: { image_urls: ['hero.png'], duration: '4' } }],
      });
      const poorEnv = { ...cliEnv, REELFLOW_TASK_QUEUE: poor.taskQueue, REELFLOW_SERVICE_URL: poor.service.url };
      const run = await runCli(['run', spec], poorEnv);
      expect(run.code).toBe(1);
      const printed = run.stdout + run.stderr;
      expect(printed).toMatch(/pipeline\/cli-poor: failed/);
      expect(printed).toMatch(/insufficient[_ ]credits/i);
      expect(printed).toContain('hint: the account has too few credits; top it up');
      expect(poor.service.service.jobs()).toHaveLength(0);
      expect(poor.service.service.balance()).toBe(price - 1);
    } finally {
      await poor.close();
    }
  });

  it('preflight: an input host that does not resolve fails the pipeline before any submit or charge, naming the field and the reason', async () => {
    // `.invalid` never resolves (RFC 6761), on this machine and on one with internet access.
    const spec = writeJson('cli-unresolvable.json', {
      name: 'cli-unresolvable',
      steps: [
        {
          id: 'generate',
          model: LONG_FORM,
          input: { image_urls: ['hero.png', 'https://reelflow-example.invalid/product.png'], duration: '4' },
        },
        {
          id: 'revoice',
          model: 'service-horizon-studio',
          input: { video_url: { $from: 'generate' }, audio_url: 'https://voice.reelflow-example.invalid/voice.wav' },
        },
      ],
    });
    const jobsBefore = h.service.service.jobs().length;
    const balanceBefore = h.service.service.balance();
    const run = await runCli(['run', spec], cliEnv);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      'steps.0.input.image_urls.1: host reelflow-example.invalid does not resolve (ENOTFOUND)',
    );
    expect(run.stdout).toContain(
      'steps.1.input.audio_url: host voice.reelflow-example.invalid does not resolve (ENOTFOUND)',
    );
    expect(run.stdout).toMatch(/pipeline\/cli-unresolvable: failed/);
    // Nothing reached the service's queue, nothing was charged, and no fallback poll was waited for.
    expect(h.service.service.jobs()).toHaveLength(jobsBefore);
    expect(h.service.service.balance()).toBe(balanceBefore);
    const handle = env.client.workflow.getHandle('pipeline/cli-unresolvable');
    const description = await handle.describe();
    // Refused by the preflight (a local activity), not found by a fallback poll (180 s after a submit):
    // no activity task in the history, whatever the load (no wall-clock bound).
    expect(description.status.name).toBe('FAILED');
    const history = await handle.fetchHistory();
    expect(
      (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
    ).toEqual([]);
    const status = jsonOf(await runCli(['status', 'cli-unresolvable', '--json'], cliEnv));
    expect(status.progress.steps.map((s: { status: string }) => s.status)).toEqual(['failed', 'failed']);
    expect(status.progress.ledger).toEqual({ quoted: 0, charged: 0, refunded: 0, net: 0 });
    await maybeRecordHistory(handle, 'pipeline-preflight-refused');

    // --no-preflight sends it anyway: the service accepts the job (and fails it: the next test's subject).
    const skipped = await runCli(['run', spec, '--no-preflight', '--detach'], cliEnv);
    expect(skipped.code).toBe(0);
    await eventually(() => h.service.service.jobs().length > jobsBefore, 'the job submitted without preflight');
  });

  it('a job the service fails after acceptance shows its error.code and error.message in `reelflow status` after the early status check (no failure events)', async () => {
    // The bridge is registered for completions only, as with a service that sends no failure events.
    const spec = writeJson('cli-refused.json', {
      name: 'cli-refused',
      steps: [
        {
          id: 'generate',
          model: LONG_FORM,
          input: { image_urls: ['https://reelflow-example.invalid/hero.png'], duration: '4' },
        },
      ],
    });
    const early = 2;
    const run = await runCli(['run', spec, '--no-preflight', '--detach'], {
      ...cliEnv,
      REELFLOW_EARLY_STATUS_CHECK_SECONDS: String(early),
    });
    expect(run.code).toBe(0);
    const shown = await eventually(
      async () => {
        const status = await runCli(['status', 'cli-refused'], cliEnv);
        // The failed attempt shows while the pipeline still closes; the error line once it has failed.
        return /error: .*input_refused/.test(status.stdout) ? status.stdout : undefined;
      },
      'the service reason in reelflow status',
      60_000,
    );
    expect(shown).toMatch(
      /attempt 1 \S+ FAILED: input_refused: image_urls\.0: host reelflow-example\.invalid does not resolve \(ENOTFOUND\)/,
    );
    expect(shown).toMatch(
      /error: .*the service said input_refused: image_urls\.0: host reelflow-example\.invalid does not resolve/,
    );
    const summary = jsonOf(await runCli(['status', 'cli-refused', '--json'], cliEnv)).progress;
    const step = summary.steps[0];
    // Learned by the one early check (a poll, counted), not by waiting for the first paced poll at 180 s:
    // its offset is the early delay plus however late a loaded machine ran the task (bound 180 / 5 s).
    expect(step.polls).toBe(1);
    expect(step.pollOffsetsSeconds[0]).toBeGreaterThanOrEqual(early);
    expect(step.pollOffsetsSeconds[0]).toBeLessThan(180 / 5);
    expect(step.attemptLog[0]).toMatchObject({
      outcome: 'FAILED',
      learnedBy: 'poll',
      serviceError: {
        code: 'input_refused',
        message: 'image_urls.0: host reelflow-example.invalid does not resolve (ENOTFOUND)',
      },
    });
    expect(summary.error).toContain(
      'input_refused: image_urls.0: host reelflow-example.invalid does not resolve (ENOTFOUND)',
    );
    // Submit answered → reason known, in workflow time: the early check's delay and one poll (5× margin to the paced poll).
    expect(step.finishedAt - step.submittedAt).toBeLessThan((180 / 5) * 1000);
    await maybeRecordHistory(env.client.workflow.getHandle('pipeline/cli-refused'), 'pipeline-early-check-failed');
  });
});
