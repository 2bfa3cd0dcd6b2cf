import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import {
  collectBatchReport,
  collectPipelineReport,
  type BatchItemInput,
  type CollectOptions,
} from '../../report/collect';
import { renderBatchReport, renderReport } from '../../report/render';
import type { Report } from '../../report/model';
import { pipelineWorkflowId } from '../../workflows/definitions';
import type { BatchItemResult } from '../../workflows/batch-types';
import { batchResults } from '../lib/batch-store';
import type { MediaStore } from '../../media/store';
import { batchProgress, cliEnv, cliMediaStore, findWorkflow, pipelineSummary, withTemporal } from '../lib/context';
import { printJson, say } from '../lib/output';

/** Videos up to this size in total are embedded in the page by default. */
const DEFAULT_EMBED_LIMIT_MB = 64;
/** Cards per page of a batch's gallery (a larger batch gets several pages). */
const BATCH_PAGE_SIZE = 100;

interface ReportOptions {
  out?: string;
  embedLimitMb: number;
  temporalUi?: string;
  json: boolean;
}

/** Link to a workflow in the Temporal UI. */
export function temporalUiLink(uiUrl: string, namespace: string, workflowId: string): string {
  return `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

function megabytes(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number of MiB, 0 or more');
  return n;
}

function uiUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // fall through
  }
  throw new InvalidArgumentError('must be an http(s) URL such as http://127.0.0.1:8233');
}

/** Status and times of a workflow, from its description. */
async function facts(handle: WorkflowHandle): Promise<{ startedAt: Date | null; closedAt: Date | null }> {
  const description = await handle.describe();
  return { startedAt: description.startTime ?? null, closedAt: description.closeTime ?? null };
}

/** Every item of a batch: finished ones with their result, running ones by name, each with its pipeline's summary. */
async function batchItems(
  client: Client,
  results: BatchItemResult[],
  running: string[],
  link: (id: string) => string | undefined,
  resultsSuffice = false,
): Promise<BatchItemInput[]> {
  const all: BatchItemResult[] = [
    ...results,
    ...running.map((name): BatchItemResult => ({ name, workflowId: pipelineWorkflowId(name), status: 'skipped' })),
  ];
  const items: BatchItemInput[] = [];
  for (const result of all) {
    const ui = link(result.workflowId);
    // A paged batch's results carry each final output: no pipeline is asked but the running ones.
    const summary =
      (result.status === 'skipped' || resultsSuffice) && !running.includes(result.name)
        ? null
        : await pipelineSummary(client.workflow.getHandle(result.workflowId)).catch(() => null);
    items.push({ result, summary, ...(ui ? { temporalUiUrl: ui } : {}) });
  }
  return items;
}

/** `reelflow report <pipeline|batch>`: one self-contained HTML page with the outputs, posters and credits. */
export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description(
      'Write one self-contained HTML page for a pipeline (players, poster frames, ffprobe facts, credits, timings, request ids) or a batch (gallery with state filters and totals)',
    )
    .argument('<id>', 'pipeline/<name>, batch/<name>, or a bare name')
    .option('--out <file>', 'the HTML file to write (default: <name>.report.html in the current directory)')
    .option(
      '--embed-limit-mb <n>',
      `videos up to this total size go inside the page; larger sets are written to <file>-media/ beside it`,
      megabytes,
      DEFAULT_EMBED_LIMIT_MB,
    )
    .option(
      '--temporal-ui <url>',
      'Temporal UI address, to link each pipeline to its page (e.g. the URL `reelflow dev` prints)',
      uiUrl,
    )
    .option('--json', 'print {file, kind, workflowId, videos, problems} as JSON', false)
    .action(async (id: string, options: ReportOptions) => {
      const env = cliEnv();
      await withTemporal(env, async ({ client, settings }) => {
        const found = await findWorkflow(client, id);
        const name = found.workflowId.replace(/^(pipeline|batch)\//, '');
        const file = path.resolve(options.out ?? `${name.replace(/[^A-Za-z0-9._-]+/g, '_')}.report.html`);
        const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-report-'));
        const link = (workflowId: string) =>
          options.temporalUi ? temporalUiLink(options.temporalUi, settings.namespace, workflowId) : undefined;
        const collect: CollectOptions = {
          workDir,
          serviceOrigin: env.service ? new URL(env.service.url).origin : null,
          embedLimitBytes: options.embedLimitMb * 1024 * 1024,
          mediaDir: `${file.replace(/\.html?$/i, '')}-media`,
          pageDir: path.dirname(file),
          // Archived outputs are read from the media store (the service may have deleted its files).
          store: cliMediaStore(env).store,
        };
        let report: Report;
        try {
          if (found.kind === 'pipeline') {
            const summary = await pipelineSummary(found.handle);
            const ui = link(found.workflowId);
            report = await collectPipelineReport(
              summary,
              { workflowId: found.workflowId, ...(await facts(found.handle)), ...(ui ? { temporalUiUrl: ui } : {}) },
              collect,
            );
          } else {
            const progress = await batchProgress(found.handle);
            // A paged batch's results are in its result pages in the media store.
            const results = await batchResults(progress, collect.store as MediaStore);
            report = await collectBatchReport(
              progress,
              found.workflowId,
              await batchItems(client, results, progress.running, link, progress.resultPages !== undefined),
              collect,
            );
          }
        } finally {
          fs.rmSync(workDir, { recursive: true, force: true });
        }
        fs.mkdirSync(path.dirname(file), { recursive: true });
        // Written whole, then renamed: a reader never sees half a page.
        const write = (target: string, html: string) => {
          fs.writeFileSync(`${target}.part`, html);
          fs.renameSync(`${target}.part`, target);
        };
        const pageFiles: string[] = [file];
        if (report.kind === 'batch' && report.items.length > BATCH_PAGE_SIZE) {
          // A large batch: a gallery of pages, the first at <file>, the others beside it.
          const count = Math.ceil(report.items.length / BATCH_PAGE_SIZE);
          const base = file.replace(/\.html?$/i, '');
          const href = (n: number) => path.basename(n === 1 ? file : `${base}-page-${n}.html`);
          for (let n = 1; n <= count; n += 1) {
            const target = n === 1 ? file : `${base}-page-${n}.html`;
            if (n > 1) pageFiles.push(target);
            write(
              target,
              renderBatchReport(report, {
                number: n,
                count,
                href,
                first: (n - 1) * BATCH_PAGE_SIZE,
                size: BATCH_PAGE_SIZE,
              }),
            );
          }
        } else write(file, renderReport(report));
        const videos =
          report.kind === 'pipeline'
            ? report.steps.flatMap((s) => s.videos)
            : report.items.flatMap((i) => (i.finalVideo ? [i.finalVideo] : []));
        const problems = videos.filter((v) => v.problem).map((v) => `${v.url}: ${v.problem}`);
        if (options.json) {
          printJson({
            file,
            pages: pageFiles,
            kind: report.kind,
            workflowId: found.workflowId,
            videos: videos.length,
            problems,
          });
        } else {
          say(
            `report of ${found.workflowId}: ${file}${pageFiles.length > 1 ? ` and ${pageFiles.length - 1} more page(s) beside it` : ''} (${videos.length} video${videos.length === 1 ? '' : 's'}${videos.some((v) => v.src && !v.src.startsWith('data:')) ? `, media in ${collect.mediaDir}` : ', media embedded'})`,
          );
          for (const problem of problems) say(`  problem: ${problem}`);
        }
      });
    });
}
