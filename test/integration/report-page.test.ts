/// <reference lib="dom" />
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { collectBatchReport, collectPipelineReport, type CollectOptions } from '../../src/report/collect';
import { renderReport } from '../../src/report/render';
import type { JobResult } from '../../src/contract';
import type { BatchProgress } from '../../src/workflows/batch-types';
import type { JobStepFields, PipelineSummary, StepSummary } from '../../src/workflows/pipeline-types';
import { createFileStore, putMediaFile } from '../../src/media/store';
import type { ArchivedOutput } from '../../src/media/reference';
import { announceSkip, browserOrReason } from '../helpers/browser';
import { LONG_FORM, PIXEL_PNG, startTestService, waitForStatus, type TestService } from '../helpers/local-service';

/**
 * `reelflow report` pages with real outputs: the local service renders two clips with ffmpeg (4 s
 * and 5 s), the report fetches them over HTTP, probes them, extracts posters, embeds everything,
 * and headless Chromium opens the page from disk: every <video> loads its metadata with the
 * duration ffprobe measured (and the one requested), posters carry alt text, the batch filters work
 * from the keyboard, and the page reads at a phone's width without sideways scrolling.
 */

let svc: TestService;
let browser: Browser | null = null;
let skipReason: string | null = null;
let work: string;
const results: Record<string, JobResult> = {};
const SHOTS = path.join(__dirname, '..', '..', 'docs', 'images', 'test-run');

async function render(model: string, input: Record<string, unknown>): Promise<JobResult> {
  const submitted = await svc.call('POST', `/v1/queue/${model}`, { body: input });
  expect(submitted.status).toBe(202);
  const id = submitted.body.request_id as string;
  expect(await waitForStatus(svc.url, id, (s) => s === 'COMPLETED' || s === 'FAILED', 90_000)).toBe('COMPLETED');
  return (await svc.call('GET', `/v1/queue/requests/${id}`)).body as JobResult;
}

function step(
  id: string,
  status: StepSummary['status'],
  result?: JobResult,
  extra: Partial<StepSummary> = {},
): StepSummary {
  return {
    id,
    model: LONG_FORM as JobStepFields['model'],
    status,
    stepKey: `report-test/job/${id}`,
    requestIds: result ? [result.request_id] : [],
    attempts: result ? 1 : 0,
    quoted: result ? 100 : 0,
    charged: result ? 100 : 0,
    refunded: 0,
    polls: 0,
    ...(result ? { output: result } : {}),
    ...extra,
  };
}

function options(): CollectOptions {
  const workDir = fs.mkdtempSync(path.join(work, 'scratch-'));
  return {
    workDir,
    serviceOrigin: new URL(svc.url).origin,
    embedLimitBytes: 64 * 1024 * 1024,
    mediaDir: path.join(work, 'media'),
    pageDir: work,
  };
}

/** Every <video> of the page: its duration once metadata loaded (or the error), and what the page expects. */
async function videoDurations(
  url: string,
  width = 1280,
): Promise<Array<{ duration: number | string; expected: number; label: string | null }>> {
  const page = await (browser as Browser).newPage({ viewport: { width, height: 900 } });
  try {
    await page.goto(url);
    return await page.$$eval('video', (videos) =>
      Promise.all(
        videos.map(
          (v) =>
            new Promise<{ duration: number | string; expected: number; label: string | null }>((resolve) => {
              const video = v as HTMLVideoElement;
              const done = () =>
                resolve({
                  duration: video.duration,
                  expected: Number(video.dataset.expectedDuration),
                  label: video.getAttribute('aria-label'),
                });
              if (video.readyState >= 1) done();
              video.addEventListener('loadedmetadata', done);
              video.addEventListener('error', () =>
                resolve({
                  duration: `error ${video.error?.code}`,
                  expected: Number(video.dataset.expectedDuration),
                  label: null,
                }),
              );
              video.load();
            }),
        ),
      ),
    );
  } finally {
    await page.close();
  }
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-report-'));
  svc = await startTestService();
  results.four = await render(LONG_FORM, { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' });
  results.five = await render(LONG_FORM, {
    image_urls: [PIXEL_PNG],
    duration: '5',
    resolution: '480p',
    aspect_ratio: '1:1',
  });
  const found = await browserOrReason();
  browser = found.browser;
  skipReason = found.reason;
  fs.mkdirSync(SHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await svc?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('reelflow report pages', () => {
  it('a pipeline page: posters, ffprobe facts, credits, timings, request ids, players with the expected durations', async () => {
    const t0 = Date.parse('2026-01-01T10:00:00.000Z');
    const summary: PipelineSummary = {
      name: 'report-test',
      status: 'failed',
      currentStep: null,
      budgetCredits: 500,
      ledger: { quoted: 200, charged: 200, refunded: 0, net: 200 },
      steps: [
        step('generate', 'completed', results.four, { submittedAt: t0 + 400, finishedAt: t0 + 9_400 }),
        step('square', 'completed', results.five, { submittedAt: t0 + 9_500, finishedAt: t0 + 20_000 }),
        step('upscale', 'failed', undefined, { error: 'step upscale: <script>alert(1)</script> refused' }),
      ],
      outputs: { generate: results.four as JobResult, square: results.five as JobResult },
      error: 'pipeline report-test failed at step upscale',
    };
    const report = await collectPipelineReport(
      summary,
      { workflowId: 'pipeline/report-test', startedAt: new Date(t0), closedAt: new Date(t0 + 21_000) },
      options(),
    );
    const [generate, square, upscale] = report.steps;
    expect(generate?.videos[0]).toMatchObject({ width: 854, height: 480, videoCodec: 'h264' });
    expect(generate?.videos[0]?.durationSeconds).toBeCloseTo(4, 1);
    expect(square?.videos[0]?.durationSeconds).toBeCloseTo(5, 1);
    expect(square?.videos[0]?.width).toBe(square?.videos[0]?.height);
    expect(generate?.videos[0]?.poster).toMatch(/^data:image\/jpeg;base64,\/9j\//);
    expect(generate?.videos[0]?.src).toMatch(/^data:video\/mp4;base64,/);
    // Handing off: 0.4 s from the pipeline's start; 0.1 s between the steps. Rendering is the service's figure.
    expect(generate?.timings.handoffSeconds).toBe(0.4);
    expect(square?.timings.handoffSeconds).toBe(0.1);
    expect(generate?.timings.renderingSeconds).toBeCloseTo(results.four?.timings?.inference_seconds ?? NaN, 1);
    expect(upscale?.videos).toEqual([]);

    const html = renderReport(report);
    // Self-contained: nothing fetched from anywhere; the user's text is escaped.
    expect(html).not.toMatch(/(src|href)="https?:\/\/(?!127\.0\.0\.1)/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain(results.four?.request_id);
    const file = path.join(work, 'pipeline.html');
    fs.writeFileSync(file, html);

    if (!browser) return announceSkip('report page in Chromium', skipReason ?? 'no browser');
    const durations = await videoDurations(`file://${file}`);
    expect(durations).toHaveLength(2);
    for (const video of durations) {
      expect(typeof video.duration).toBe('number');
      expect(Math.abs((video.duration as number) - video.expected)).toBeLessThan(0.1);
    }
    expect(durations[0]?.duration as number).toBeCloseTo(4, 0);
    expect(durations[1]?.duration as number).toBeCloseTo(5, 0);

    // Phone width: nothing wider than the screen, every poster has alt text, the page is keyboard-reachable.
    const page = await browser.newPage({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 1 });
    const blocked: string[] = [];
    page.on('request', (r) => {
      if (!/^(file|data):/.test(r.url())) blocked.push(r.url());
    });
    await page.goto(`file://${file}`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    const alts = await page.$$eval('video img', (imgs) => imgs.map((i) => i.getAttribute('alt') ?? ''));
    expect(alts).toEqual([
      expect.stringMatching(/^Poster frame of step generate output 1 at 1\.0 s$/),
      expect.stringMatching(/^Poster frame of step square/),
    ]);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.screenshot({ path: path.join(SHOTS, 'report-pipeline-phone.png'), fullPage: false });
    await page.close();
    expect(blocked).toEqual([]);
  });

  it('an archived output is read from the media store (SHA-256 checked) when the service no longer serves it', async () => {
    const served = results.five?.videos[0];
    if (!served) throw new Error('no video rendered');
    const copyFile = path.join(work, 'archived-five.mp4');
    fs.writeFileSync(copyFile, Buffer.from(await (await fetch(served.url)).arrayBuffer()));
    const store = createFileStore(path.join(work, 'store'));
    const ref = await putMediaFile(store, copyFile, 'video/mp4', 'report-archived');
    // The service has deleted its file: its URL answers 404; the pipeline kept the copy (step.archived).
    const gone = `${svc.url}/files/deleted-${served.file_name}`;
    const archived: ArchivedOutput = { ...ref, url: gone, file_name: served.file_name };
    const result: JobResult = { ...(results.five as JobResult), videos: [{ ...served, url: gone }] };
    const summary: PipelineSummary = {
      name: 'report-archived',
      status: 'completed',
      currentStep: null,
      budgetCredits: null,
      ledger: { quoted: 100, charged: 100, refunded: 0, net: 100 },
      steps: [step('generate', 'completed', result, { archived: [archived] })],
      outputs: { generate: result },
    };
    const facts = { workflowId: 'pipeline/report-archived', startedAt: null, closedAt: null };
    const [fromStore] = (await collectPipelineReport(summary, facts, { ...options(), store })).steps;
    expect(fromStore?.videos[0]).toMatchObject({ archivedFrom: ref.$media, url: gone, videoCodec: 'h264' });
    expect(fromStore?.videos[0]?.problem).toBeUndefined();
    expect(fromStore?.videos[0]?.durationSeconds).toBeCloseTo(5, 1);
    // Without the store the service URL is all there is, and the page says why the player is missing.
    const [withoutStore] = (await collectPipelineReport(summary, facts, options())).steps;
    expect(withoutStore?.videos[0]?.problem).toMatch(/^cannot fetch http:\/\/127\.0\.0\.1:\d+\/files\/deleted-.*404/);
  });

  it('a batch page: a gallery with totals and state filters that work from the keyboard', async () => {
    const progress: BatchProgress = {
      name: 'nightly',
      total: 3,
      toRun: 3,
      completed: 2,
      failed: 1,
      cancelled: 0,
      skipped: 0,
      running: [],
      runs: 1,
      status: 'completed',
      results: [
        {
          name: 'a',
          workflowId: 'pipeline/a',
          status: 'completed',
          ledger: { quoted: 100, charged: 100, refunded: 0, net: 100 },
        },
        {
          name: 'b',
          workflowId: 'pipeline/b',
          status: 'completed',
          ledger: { quoted: 100, charged: 100, refunded: 0, net: 100 },
        },
        {
          name: 'c',
          workflowId: 'pipeline/c',
          status: 'failed',
          ledger: { quoted: 100, charged: 100, refunded: 100, net: 0 },
          error: 'step generate failed',
        },
      ],
    };
    const pipeline = (name: string, result?: JobResult): PipelineSummary => ({
      name,
      status: result ? 'completed' : 'failed',
      currentStep: null,
      budgetCredits: null,
      ledger: { quoted: 100, charged: 100, refunded: result ? 0 : 100, net: result ? 100 : 0 },
      steps: [step('generate', result ? 'completed' : 'failed', result)],
      outputs: result ? { generate: result } : {},
    });
    const report = await collectBatchReport(
      progress,
      'batch/nightly',
      [
        { result: progress.results[0]!, summary: pipeline('a', results.four) },
        { result: progress.results[1]!, summary: pipeline('b', results.five) },
        { result: progress.results[2]!, summary: pipeline('c') },
      ],
      options(),
    );
    expect(report.totals).toMatchObject({
      items: 3,
      byState: { completed: 2, failed: 1 },
      credits: { net: 200, charged: 300, refunded: 100 },
    });
    expect(report.totals.videoSeconds).toBeCloseTo(9, 0);
    const file = path.join(work, 'batch.html');
    fs.writeFileSync(file, renderReport(report));

    if (!browser) return announceSkip('batch report in Chromium', skipReason ?? 'no browser');
    const durations = await videoDurations(`file://${file}`);
    expect(durations.map((d) => Math.abs((d.duration as number) - d.expected) < 0.1)).toEqual([true, true]);

    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(`file://${file}`);
    const visible = () =>
      page.$$eval('.gallery > li', (cards) =>
        cards.filter((c) => !(c as HTMLElement).hidden).map((c) => c.getAttribute('data-state')),
      );
    expect(await visible()).toEqual(['completed', 'completed', 'failed']);
    // Keyboard only: focus the "failed" filter and press Enter.
    await page.focus('button[data-filter="failed"]');
    await page.keyboard.press('Enter');
    expect(await visible()).toEqual(['failed']);
    expect(await page.getAttribute('button[data-filter="failed"]', 'aria-pressed')).toBe('true');
    expect(await page.textContent('#filter-status')).toBe('1 of 3 shown');
    await page.click('button[data-filter="all"]');
    expect(await visible()).toHaveLength(3);
    await page.screenshot({ path: path.join(SHOTS, 'report-batch.png'), fullPage: true });
    await page.close();
  });
});
