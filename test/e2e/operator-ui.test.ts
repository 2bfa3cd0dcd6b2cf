/// <reference lib="dom" />
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Browser, Frame, Locator, Page } from 'playwright-core';
import { threeStepPipeline } from '../../src/pipeline-spec';
import { collectPipelineReport } from '../../src/report/collect';
import { renderReport } from '../../src/report/render';
import { freePort } from '../../src/stack/stack-state';
import { SEARCH_ATTRIBUTE_KEYS, pipelineProgressQuery, pipelineWorkflowId } from '../../src/workflows/definitions';
import { cancelStepUpdate } from '../../src/workflows/definitions';
import type { PipelineSummary, PipelineWorkflowInput } from '../../src/workflows/pipeline-types';
import { pipelineStartOptions } from '../../src/pipeline-spec/ui-text';
import { announceSkip, browserOrReason } from '../helpers/browser';
import { PIXEL_PNG } from '../helpers/local-service';
import { startDevServer } from '../helpers/temporal';
import {
  bundleReelflowWorkflows,
  eventually,
  silentWavDataUri,
  startHarness,
  startTestBridge,
  type Harness,
  type TestBridge,
} from '../integration/workflow-harness';

/**
 * The operator console as a person uses it, in headless Chromium (Debian's package through
 * playwright-core): the Temporal UI of the test stack (the dev server with its UI) shows the
 * pipeline's summary, the current-details step table and a link to an output; a cancel-step update
 * sent through the UI's own "Send an Update" form stops the running step and the page shows it
 * cancelled; then the `reelflow report` page of the pipeline plays every output with the duration
 * ffprobe measured. Screenshots go to docs/images/test-run/.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
let browser: Browser | null = null;
let skipReason: string | null = null;
let uiUrl: string;
let work: string;
const TASK_QUEUE = 'operator-ui-test';
const SHOTS = path.join(__dirname, '..', '..', 'docs', 'images', 'test-run');

beforeAll(async () => {
  const found = await browserOrReason();
  browser = found.browser;
  skipReason = found.reason;
  if (!browser) return;
  const uiPort = await freePort();
  uiUrl = `http://127.0.0.1:${uiPort}`;
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS, uiPort }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, { concurrencyPerModel: 2 });
  bridge = await startTestBridge(h.service, env, TASK_QUEUE);
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-ui-'));
  fs.mkdirSync(SHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** The "User Metadata" tab of the workflow page: summary, details and the current details. */
async function openUserMetadata(page: Page, workflowId: string): Promise<void> {
  await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`, {
    waitUntil: 'domcontentloaded',
    timeout: 60_000,
  });
  await page.getByText(workflowId).first().waitFor({ timeout: 60_000 });
  await page.getByText('User Metadata').first().click();
  await page.getByText('Current Details').first().waitFor({ timeout: 30_000 });
}

/** The UI renders summary, details and current details as markdown, each in its own frame. */
async function markdownFrame(page: Page, text: RegExp): Promise<Frame> {
  return eventually(
    async () => {
      for (const frame of page.frames()) {
        const body = await frame.textContent('body').catch(() => null);
        if (body && text.test(body)) return frame;
      }
      return undefined;
    },
    `a rendered markdown frame with ${text}`,
    60_000,
  );
}

/** The rows of the rendered current-details table, as cell texts. */
async function stepRows(page: Page): Promise<string[][]> {
  const frame = await markdownFrame(page, /Request id/);
  return frame.$$eval('table tbody tr', (rows) =>
    rows.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => (td.textContent ?? '').trim())),
  );
}

/**
 * Fills and submits the UI's own update form (More Actions → Send an Update) and returns the form,
 * still open or closing. Null when this UI version has no such form.
 */
async function submitUpdateForm(page: Page, name: string, data: unknown): Promise<Locator | null> {
  await page.getByRole('button', { name: 'More Actions' }).click();
  const item = page.locator('[role=menuitem]:visible', { hasText: 'Send an Update' }).first();
  if (
    !(await item.waitFor({ state: 'visible', timeout: 15_000 }).then(
      () => true,
      () => false,
    ))
  )
    return null;
  await item.click();
  const dialog = page
    .locator('dialog[open], [role=dialog]')
    .filter({ hasText: /Send an Update/i })
    .first();
  await dialog.waitFor({ timeout: 30_000 });
  // The name is a select of the updates the workflow registered (from its metadata query).
  await dialog.locator('[data-testid="update-select"]').locator('xpath=..').click();
  await page.getByRole('option', { name, exact: true }).click({ timeout: 30_000 });
  const editor = dialog.locator('.cm-content[contenteditable=true]').first();
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type(JSON.stringify(data));
  // The editor pretty-prints its JSON on blur, which moves the Submit button: blur first, then click.
  await dialog.getByText('Data', { exact: true }).click();
  await eventually(
    async () => ((await editor.textContent()) ?? '').includes('": '),
    'the update form to format its JSON',
    30_000,
  );
  await dialog.locator('[data-testid="confirm-modal-button"]').click();
  return dialog;
}

describe('the Temporal UI and the report in Chromium', () => {
  it('shows the summary, the step table and an output link, cancels a step from the UI, and plays the report', async () => {
    if (!browser) return announceSkip('operator console in the Temporal UI', skipReason ?? 'no browser');
    // The re-voicing step runs 120 s at the service: surely running while the UI is driven.
    h.service.service.setFaults({ modelDurationMs: { 'service-horizon-studio': 120_000 } });
    const spec = threeStepPipeline(
      { imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' },
      'ui-console',
      { allowedOrigins: [h.service.url] },
    );
    const input: PipelineWorkflowInput = { spec, uriRules: { allowedOrigins: [h.service.url] } };
    const workflowId = pipelineWorkflowId(spec.name);
    const handle = await env.client.workflow.start('pipelineWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [input],
      ...pipelineStartOptions(spec),
    });
    await eventually(async () => {
      const s = await handle.query(pipelineProgressQuery);
      return s.steps[1]?.status === 'running' && s.steps[1].requestIds.length === 1;
    }, 'the revoice step to run');

    const page = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
    await openUserMetadata(page, workflowId);
    // The static summary, and the live step table with a link to the first output.
    await markdownFrame(page, /^\s*ui-console: generate → revoice → upscale · no budget\s*$/);
    await markdownFrame(page, /<inline image\/png, 0\.1 KiB>/);
    expect((await stepRows(page)).map((cells) => cells.slice(0, 2))).toEqual([
      ['generate', 'completed'],
      ['revoice', 'running (waiting)'],
      ['upscale', 'pending'],
    ]);
    const outputLink = (await markdownFrame(page, /Request id/)).locator('table a[href*="/files/"]').first();
    expect(await outputLink.getAttribute('href')).toMatch(new RegExp(`^${h.service.url}/files/.+\\.mp4$`));
    await page.screenshot({ path: path.join(SHOTS, 'ui-running.png') });

    // A refused update: the validator's reason shows in the form, which stays open.
    const refused = await submitUpdateForm(page, 'cancelStep', { step: 'generate' });
    if (refused) {
      await refused
        .getByText('generate is completed; only a pending or running step can be cancelled')
        .first()
        .waitFor({ timeout: 60_000 });
      await page.screenshot({ path: path.join(SHOTS, 'ui-refused.png') });
      await refused.locator('[data-testid="cancel-modal-button"]').click();
      await refused.waitFor({ state: 'hidden', timeout: 30_000 });
    }
    // Cancel the running step: through the UI's form where this UI version has one, else the client.
    const form = await submitUpdateForm(page, 'cancelStep', { step: 'revoice', reason: 'cancelled from the UI test' });
    if (form) {
      // The form closes once the server accepted the update.
      await form.waitFor({ state: 'hidden', timeout: 60_000 });
    } else {
      process.stderr.write(
        'operator-ui: this Temporal UI has no "Send an Update" form; the cancel-step update goes through the client\n',
      );
      await handle.executeUpdate(cancelStepUpdate, {
        args: [{ step: 'revoice', reason: 'cancelled from the UI test' }],
      });
    }
    await handle.result().catch(() => undefined);
    // The page shows the step cancelled (the UI reloads the current details on a visit).
    await openUserMetadata(page, workflowId);
    expect((await stepRows(page)).map((cells) => cells[1])).toEqual(['completed', 'cancelled', 'skipped']);
    await page.screenshot({ path: path.join(SHOTS, 'ui-cancelled.png') });
    const job = h.service.service
      .jobs()
      .find((j) => j.model === 'service-horizon-studio' && j.idempotencyKey?.includes('ui-console'));
    expect(job?.status).toBe('CANCELLED');

    // The report: every <video> loads its metadata with the duration ffprobe measured (4 s asked).
    const summary = await handle.query(pipelineProgressQuery);
    const described = await handle.describe();
    const report = await collectPipelineReport(
      summary as PipelineSummary,
      {
        workflowId,
        startedAt: described.startTime,
        closedAt: described.closeTime ?? null,
        temporalUiUrl: `${uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`,
      },
      {
        workDir: work,
        serviceOrigin: new URL(h.service.url).origin,
        embedLimitBytes: 64 * 1024 * 1024,
        mediaDir: path.join(work, 'media'),
        pageDir: work,
      },
    );
    const file = path.join(work, 'report.html');
    fs.writeFileSync(file, renderReport(report));
    const reportPage = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
    await reportPage.goto(`file://${file}`);
    const durations = await reportPage.$$eval('video', (videos) =>
      Promise.all(
        videos.map(
          (v) =>
            new Promise<{ duration: number; expected: number }>((resolve) => {
              const video = v as HTMLVideoElement;
              const done = () =>
                resolve({ duration: video.duration, expected: Number(video.dataset.expectedDuration) });
              if (video.readyState >= 1) done();
              else video.addEventListener('loadedmetadata', done);
            }),
        ),
      ),
    );
    expect(durations).toHaveLength(1);
    for (const d of durations) {
      expect(Math.abs(d.duration - d.expected)).toBeLessThan(0.1);
      expect(d.duration).toBeCloseTo(4, 0);
    }
    expect(await reportPage.textContent('[data-step="revoice"] .state')).toBe('cancelled');
    await reportPage.screenshot({ path: path.join(SHOTS, 'report-cancelled.png'), fullPage: true });
    h.service.service.setFaults({ modelDurationMs: 0 });
  }, 300_000);
});
