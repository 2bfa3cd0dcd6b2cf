/**
 * `npm run screenshots`: regenerates the pictures of docs/ from a real run, never by hand.
 *
 * Starts the local stack in a temporary state directory on free ports, runs the canonical
 * generate → re-voice → upscale pipeline, writes its `reelflow report` page, and takes two
 * screenshots in headless Chromium (Debian's package through playwright-core):
 *   docs/images/temporal-ui-pipeline.png — the Temporal UI page of the pipeline;
 *   docs/images/report.png               — the report page.
 * Then stops the stack and deletes the state directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { chromium, type Page } from 'playwright-core';
import { threeStepPipeline } from '../src/pipeline-spec/examples';
import { collectPipelineReport } from '../src/report/collect';
import { renderReport } from '../src/report/render';
import { storedStackInputs, workflowUiUrl } from '../src/stack/demo';
import { startLocalStack } from '../src/stack/local-stack';
import { ensureReferenceInputs } from '../src/stack/reference-inputs';
import { pipelineWorkflowId, WORKFLOW_TYPES } from '../src/workflows/definitions';
import type { PipelineSummary, PipelineWorkflowInput } from '../src/workflows/pipeline-types';
import { pipelineStartOptions } from '../src/pipeline-spec/ui-text';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { resolveChromium } = require('./chromium-tools') as {
  resolveChromium(options?: { install?: boolean }): { path: string } | null;
};

const IMAGES = resolve(__dirname, '..', 'docs', 'images');

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Waits until the Temporal UI has rendered the workflow page (its id in the heading and the history loaded). */
async function openWorkflowPage(page: Page, url: string, workflowId: string): Promise<void> {
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  await page.getByText(workflowId).first().waitFor({ timeout: 60_000 });
  // The summary, the details and the live step table are on the "User Metadata" tab.
  await page.getByText('User Metadata').first().click();
  await page.getByText('Current Details').first().waitFor({ timeout: 30_000 });
  await page.waitForTimeout(1_500);
}

async function main(): Promise<void> {
  const browserPath = resolveChromium({ install: false });
  if (!browserPath)
    throw new Error(
      'no Chromium found (CHROMIUM_PATH, /usr/bin/chromium); run `node scripts/ensure-chromium.js --install`',
    );
  const stateDir = mkdtempSync(join(tmpdir(), 'reelflow-screens-'));
  const stack = await startLocalStack({
    stateDir,
    autoPorts: true,
    reuseRunning: false,
    log: (line) => log(`  ${line}`),
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const browser = await chromium.launch({
    executablePath: browserPath.path,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  try {
    const inputs = await ensureReferenceInputs(stack.paths.inputs, 3);
    const uriRules = { allowedOrigins: [stack.serviceUrl] };
    const name = 'launch-teaser';
    const spec = threeStepPipeline(
      { ...(await storedStackInputs(stack, inputs, name)), duration: '5' },
      name,
      uriRules,
    );
    const client = new Client({ connection, namespace: stack.namespace });
    const workflowId = pipelineWorkflowId(name);
    const input: PipelineWorkflowInput = { spec, uriRules };
    log(`running ${workflowId}…`);
    const handle = await client.workflow.start(WORKFLOW_TYPES.pipeline, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [input],
      ...pipelineStartOptions(spec),
    });
    const summary = (await handle.result()) as PipelineSummary;
    if (summary.status !== 'completed')
      throw new Error(`${workflowId} ended ${summary.status}: ${summary.error ?? ''}`);

    const uiUrl = workflowUiUrl(stack.temporalUiUrl, stack.namespace, workflowId);
    const workDir = join(stateDir, 'report');
    mkdirSync(workDir, { recursive: true });
    const description = await handle.describe();
    const report = await collectPipelineReport(
      summary,
      { workflowId, startedAt: description.startTime, closedAt: description.closeTime ?? null, temporalUiUrl: uiUrl },
      {
        workDir,
        serviceOrigin: new URL(stack.serviceUrl).origin,
        embedLimitBytes: 256 * 1024 * 1024,
        mediaDir: join(workDir, 'media'),
        pageDir: workDir,
      },
    );
    const reportFile = join(stateDir, 'report.html');
    writeFileSync(reportFile, renderReport(report));
    mkdirSync(IMAGES, { recursive: true });

    const ui = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
    await openWorkflowPage(ui, uiUrl, workflowId);
    await ui.screenshot({ path: join(IMAGES, 'temporal-ui-pipeline.png') });
    log(`wrote docs/images/temporal-ui-pipeline.png (${uiUrl})`);

    const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
    await page.goto(`file://${reportFile}`);
    await page.$$eval('video', (videos) =>
      Promise.all(
        videos.map(
          (v) =>
            new Promise((done) =>
              (v as { readyState: number }).readyState >= 1 ? done(null) : v.addEventListener('loadedmetadata', done),
            ),
        ),
      ),
    );
    await page.screenshot({ path: join(IMAGES, 'report.png') });
    log('wrote docs/images/report.png');
  } finally {
    await browser.close();
    await connection.close();
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`screenshots: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
