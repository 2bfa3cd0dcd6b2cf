import { extname, join } from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { MODELS } from '../contract';
import { threeStepPipeline } from '../pipeline-spec/examples';
import { DEFAULT_CLI_ARCHIVE } from '../pipeline-spec/spec';
import { pipelineProgressQuery, pipelineWorkflowId, WORKFLOW_TYPES } from '../workflows/definitions';
import type { PipelineSummary, PipelineWorkflowInput, StepSummary } from '../workflows/pipeline-types';
import type { MediaRef } from '../media/reference';
import { putMediaFile, type MediaStore } from '../media/store';
import { loadMediaSettings, loadStackSettings, type Env } from '../config';
import { mediaDeps } from '../workers/worker';
import { pipelineStartOptions } from '../pipeline-spec/ui-text';
import { startLocalStack, type LocalStack } from './local-stack';
import { fetchAndCheck, type CheckedOutput } from './output-check';
import { longAdPipeline, tendGate } from './demo-graph';
import { ensureReferenceInputs } from './reference-inputs';
import { redact } from './stack-state';

/** Options of the demo; `npm run demo` takes them from the environment (see `demoOptionsFromEnv`). */
export interface DemoOptions {
  stateDir: string;
  /** Free ports on the first start of the state directory (tests, CI). */
  autoPorts?: boolean;
  /** Where the demo writes its lines (default stdout). */
  out?: (line: string) => void;
  /** How often progress is queried, ms (default 500). */
  pollMs?: number;
  /** Run the long ad (a graph with an approval gate) instead of the three steps; `approve`: decide the gate (`--yes`). */
  graph?: { approve: boolean };
}

/** `REELFLOW_STATE_DIR` (default `.reelflow`) and `REELFLOW_DEV_PORTS=auto` (free ports on first start). */
export function demoOptionsFromEnv(env?: Env): DemoOptions {
  return loadStackSettings(env);
}

const MIME: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
};

/**
 * A local file as a media-store reference (what `reelflow run` does with local paths): workflows
 * carry the reference, the activities hand the service a data URI or a signed URL at the call.
 */
export async function storedInput(store: MediaStore, file: string, pipeline: string): Promise<MediaRef> {
  return putMediaFile(store, file, MIME[extname(file).toLowerCase()] ?? 'application/octet-stream', pipeline);
}

/** The reference images and voice track of the canonical pipeline, put into the stack's media store. */
export async function storedStackInputs(
  stack: LocalStack,
  inputs: { imagePaths: string[]; voicePath: string },
  pipeline: string,
): Promise<{ imageUrls: MediaRef[]; audioUrl: MediaRef }> {
  // The stack's media store (the one its worker reads): REELFLOW_MEDIA_STORE, else <state dir>/media.
  const { store } = mediaDeps(stack.serviceUrl, loadMediaSettings(undefined, { stateDir: stack.paths.root }));
  return {
    imageUrls: await Promise.all(inputs.imagePaths.map((file) => storedInput(store, file, pipeline))),
    audioUrl: await storedInput(store, inputs.voicePath, pipeline),
  };
}

/** Temporal UI page of a workflow. */
export function workflowUiUrl(uiUrl: string, namespace: string, workflowId: string): string {
  return `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

function uniqueName(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `demo-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
}

/** One step as the progress lines show it. */
export interface StepProgress {
  id: string;
  /** The pipeline's step status, with the job's phase while it runs (`running/waiting`). */
  state: string;
  requestId: string | null;
  charged: number;
  refunded: number;
  done: boolean;
  /** The step's own clock: submit answered, terminal state reached (epoch ms). */
  submittedAt?: number;
  finishedAt?: number;
}

/** A step's progress, as the pipeline's summary reports it. */
function stepProgress(step: StepSummary): StepProgress {
  return {
    id: step.id,
    state: step.status === 'running' && step.phase ? `running/${step.phase}` : step.status,
    requestId: step.requestIds.at(-1) ?? step.attemptLog?.at(-1)?.requestId ?? null,
    charged: step.charged,
    refunded: step.refunded,
    done: !['pending', 'running'].includes(step.status),
    ...(step.submittedAt !== undefined ? { submittedAt: step.submittedAt } : {}),
    ...(step.finishedAt !== undefined ? { finishedAt: step.finishedAt } : {}),
  };
}

/** Prints a line per step whenever its state, request id or credits change (with elapsed time). */
function progressPrinter(out: (line: string) => void) {
  const seen = new Map<string, string>();
  const startedAt = new Map<string, number>();
  const endedAt = new Map<string, number>();
  const printedAt = new Map<string, number>();
  return (steps: readonly StepProgress[]) => {
    const now = Date.now();
    for (const step of steps) {
      if (step.state !== 'pending' && !startedAt.has(step.id)) startedAt.set(step.id, now);
      if (step.done && !endedAt.has(step.id)) endedAt.set(step.id, now);
      const requestId = step.requestId ?? '-';
      const key = `${step.state}|${requestId}|${step.charged}|${step.refunded}`;
      // Unchanged steps stay quiet, except a running one every 5 s so its elapsed time is visible.
      if (
        seen.get(step.id) === key &&
        (step.done || step.state === 'pending' || now - (printedAt.get(step.id) ?? 0) < 5_000)
      )
        continue;
      seen.set(step.id, key);
      printedAt.set(step.id, now);
      // Submit → terminal state by the pipeline's clock when it has one, else as seen from here.
      const start = step.submittedAt ?? startedAt.get(step.id);
      const end = step.submittedAt !== undefined ? (step.finishedAt ?? now) : (endedAt.get(step.id) ?? now);
      const elapsed = start === undefined ? 0 : (end - start) / 1000;
      const credits = `${step.charged} credits${step.refunded ? ` (${step.refunded} refunded)` : ''}`;
      out(
        `  ${step.id.padEnd(9)} ${step.state.padEnd(23)} ${requestId.padEnd(36)} ${credits.padEnd(11)} ${elapsed.toFixed(1)}s`,
      );
    }
  };
}

/** Where the stack runs, and its (redacted) API key. */
function printStack(out: (line: string) => void, stack: LocalStack, t0: number): void {
  out(
    stack.reusedFrom
      ? `stack: reused the running \`reelflow dev\` (pid ${stack.reusedFrom.pid})`
      : `stack: started here in ${((Date.now() - t0) / 1000).toFixed(1)}s`,
  );
  out(`  Temporal      ${stack.temporalAddress} (namespace ${stack.namespace})`);
  out(`  Temporal UI   ${stack.temporalUiUrl}`);
  out(`  service       ${stack.serviceUrl}`);
  out(`  bridge        ${stack.bridgeUrl}`);
  out(`  API key       ${redact(stack.apiKey)} (${stack.apiKeyCreated ? 'created' : 'reused'}; ${stack.paths.apiKey})`);
}

/**
 * Follows the pipeline until it ends (its summary, or the error it failed with), printing its progress
 * every `pollMs`; `interrupted` when a signal came first.
 */
async function followPipeline(
  handle: WorkflowHandle,
  interrupted: Promise<'interrupted'>,
  print: (steps: readonly StepProgress[]) => void,
  pollMs: number,
): Promise<{ summary: PipelineSummary; error: null } | { summary: null; error: Error } | 'interrupted'> {
  const result = handle.result() as Promise<PipelineSummary>;
  let finished = false;
  const outcome = result.then(
    (summary) => ({ summary, error: null }),
    (error: Error) => ({ summary: null, error }),
  );
  void outcome.then(() => (finished = true));
  while (!finished) {
    const winner = await Promise.race([outcome, interrupted, new Promise((resolve) => setTimeout(resolve, pollMs))]);
    if (winner === 'interrupted') return 'interrupted';
    try {
      const progress = await handle.query(pipelineProgressQuery);
      print(progress.steps.map(stepProgress));
    } catch {
      // The workflow may not have run its first task yet, or has just closed; the next round tells.
    }
  }
  return await outcome;
}

/** Each output with its size, length and ffprobe verdict, its file and its URL. */
function printOutputs(out: (line: string) => void, checked: readonly CheckedOutput[]): void {
  out('outputs:');
  for (const file of checked) {
    const verdict = file.problems.length === 0 ? 'ok' : `FAILED: ${file.problems.join('; ')}`;
    out(
      `  ${file.step.padEnd(9)} ${file.width}x${file.height} ${file.durationSeconds.toFixed(2)}s  ffprobe ${verdict}`,
    );
    out(`            file ${file.path}`);
    out(`            url  ${file.url}`);
  }
}

/**
 * `npm run demo`: starts (or reuses) the local stack, generates reference inputs, runs the canonical
 * generate → re-voice → upscale pipeline with live progress, downloads and ffprobe-checks every
 * output, and prints paths, URLs, credits and the Temporal UI link. Returns the exit code: 0 only when
 * the pipeline completed and every output passed. Stops what it started (not a reused `reelflow dev`).
 */
export async function runDemo(options: DemoOptions): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const t0 = Date.now();
  out(`reelflow demo — state in ${options.stateDir}`);
  const stack: LocalStack = await startLocalStack({
    stateDir: options.stateDir,
    autoPorts: options.autoPorts ?? false,
    log: (line) => out(`  ${line}`),
  });
  let connection: Connection | null = null;
  let onSignal: () => void = () => undefined;
  const interrupted = new Promise<'interrupted'>((resolve) => {
    onSignal = () => resolve('interrupted');
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  try {
    printStack(out, stack, t0);

    const inputs = await ensureReferenceInputs(stack.paths.inputs, 6);
    out(`inputs: ${inputs.imagePaths.length} reference images and a voice track in ${stack.paths.inputs}`);
    const name = uniqueName();
    const uriRules = { allowedOrigins: [stack.serviceUrl] };
    // Archived as `reelflow run` would (the outputs a later step or the user still needs).
    const stored = await storedStackInputs(stack, inputs, name);
    const spec = {
      ...(options.graph
        ? longAdPipeline(stored, name, uriRules)
        : threeStepPipeline({ ...stored, duration: '5' }, name, uriRules)),
      archive: DEFAULT_CLI_ARCHIVE,
    };
    connection = await Connection.connect({ address: stack.temporalAddress });
    const client = new Client({ connection, namespace: stack.namespace });
    const workflowId = pipelineWorkflowId(name);
    const input: PipelineWorkflowInput = { spec, uriRules };
    const handle = await client.workflow.start(WORKFLOW_TYPES.pipeline, {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [input],
      ...pipelineStartOptions(spec),
    });
    out(
      `pipeline ${name}: ${options.graph ? 'four scenes at once → cut → revoice → review (a person) → upscale' : 'generate → revoice → upscale'} (workflow ${workflowId})`,
    );

    const print = progressPrinter(out);
    const following = followPipeline(handle, interrupted, print, options.pollMs ?? 500);
    if (options.graph)
      void tendGate(handle, following, options.graph.approve, out, options.pollMs ?? 500).catch(() => undefined);
    const outcome = await following;
    if (outcome === 'interrupted') {
      out('interrupted: the pipeline keeps running in Temporal; `reelflow status` follows it');
      return 130;
    }
    const { summary, error } = outcome;
    const uiLink = workflowUiUrl(stack.temporalUiUrl, stack.namespace, workflowId);
    if (!summary) {
      out(
        `pipeline failed: ${error?.message ?? 'unknown error'}${error?.cause instanceof Error ? ` (${error.cause.message})` : ''}`,
      );
      out(`Temporal UI: ${uiLink}`);
      return 1;
    }
    print(summary.steps.map(stepProgress));

    const dir = join(stack.paths.outputs, name);
    const checked: CheckedOutput[] = [];
    for (const step of summary.steps) {
      const url = step.output && 'videos' in step.output ? step.output.videos[0]?.url : undefined;
      if (!url || !('model' in step)) continue;
      const previous = checked.at(-1);
      const scale = 'model' in step ? MODELS[step.model].frameScale : undefined;
      const expected =
        scale && previous?.width && previous.height
          ? { width: previous.width * scale, height: previous.height * scale }
          : undefined;
      checked.push(await fetchAndCheck(step.id, url, dir, expected));
    }
    printOutputs(out, checked);
    out(
      // Nothing is quoted without a budget (each result says its charge), so the quote shows only when there was one.
      `credits: ${summary.ledger.charged} spent, ${summary.ledger.refunded} refunded, ${summary.ledger.net} net${summary.ledger.quoted ? ` (quoted ${summary.ledger.quoted})` : ''}`,
    );
    out(`Temporal UI: ${uiLink}`);
    // Every paid step with a video of its own is checked (a fan-out's items, the cut and the gate are not).
    const paid = summary.steps.filter((step) => 'model' in step && step.output && 'videos' in step.output);
    const passed =
      summary.status === 'completed' && checked.length === paid.length && checked.every((f) => f.problems.length === 0);
    out(
      `${passed ? 'demo passed' : 'demo FAILED'}: pipeline ${summary.status} in ${((Date.now() - t0) / 1000).toFixed(1)}s total`,
    );
    return passed ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await connection?.close();
    if (!stack.reusedFrom) {
      out('stopping the stack started by the demo (state kept for the next run)');
      await stack.stop();
    }
  }
}
