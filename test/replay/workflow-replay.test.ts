import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { bundleReelflowWorkflows } from '../integration/workflow-harness';
import * as workflows from '../../src/workflows';
import { ONE_WORKFLOW_PATCH } from '../../src/workflows/pipeline';

/**
 * Replays recorded histories against the current code: those of earlier versions
 * (histories/v1-child-workflows: pipeline, job, rendezvous-era batch; histories/v2-before-preflight:
 * the one-workflow pipeline before its later patches; histories/v3-batch-in-history: batches whose
 * input held every spec, before manifests moved into the media store; executions started on them must
 * finish on this worker) and those of the current code (histories/current). A change that makes the code issue
 * different commands for the same history (non-determinism) fails here. Re-record with
 * `npm run record-histories` after a compatible change.
 */
const root = path.join(__dirname, 'histories');
const folders = ['v1-child-workflows', 'v2-before-preflight', 'v3-batch-in-history', 'current'];
const files = folders.flatMap((folder) => {
  const dir = path.join(root, folder);
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => path.join(folder, f))
    : [];
});

/** Reads one recorded history (base64 protobuf inside JSON, written by maybeRecordHistory). */
function load(file: string) {
  const record = JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')) as {
    workflowId: string;
    encoding: string;
    history: string;
  };
  if (record.encoding !== 'protobuf-base64') throw new Error(`${file}: unknown encoding ${record.encoding}`);
  return {
    workflowId: `${file}:${record.workflowId}`,
    history: temporal.api.history.v1.History.decode(Buffer.from(record.history, 'base64')),
  };
}

const typeOf = (file: string) =>
  load(file).history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
/** The ids of the patches a history recorded (core_patch markers carry the id as a JSON payload). */
const patchesOf = (file: string): string[] =>
  (load(file).history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    return Object.values(marker.details ?? {}).flatMap((payloads) =>
      (payloads.payloads ?? []).map((p) => Buffer.from(p.data ?? []).toString()),
    );
  });

/**
 * Patch branches without a recorded history yet: cancel-before-submit's new branch is reached only
 * when a cancel and an operator's `resubmit` decision for an ambiguous step land in the same workflow
 * task (any other cancel stops the step before submit() is entered), which no scenario records yet.
 * Closing a gap makes this list shorter; a new patch without histories fails.
 */
const KNOWN_GAPS: string[] = ['cancel-before-submit: new'];

let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  bundle = await bundleReelflowWorkflows();
});

describe('replay of recorded workflow histories', () => {
  it('has histories of every workflow type of both versions to replay', () => {
    const types = (folder: string) => new Set(files.filter((f) => f.startsWith(folder)).map(typeOf));
    expect([...types('v1-child-workflows')].sort()).toEqual(
      expect.arrayContaining(['batchWorkflow', 'jobWorkflow', 'pipelineWorkflow']),
    );
    expect([...types('current')].sort()).toEqual(expect.arrayContaining(['pipelineWorkflow', 'webhookRouteWorkflow']));
    // The current pipelines ran the one-workflow path (its patch marker), the old ones did not.
    const patchedIn = (file: string) => patchesOf(file).some((data) => data.includes(ONE_WORKFLOW_PATCH));
    const pipelines = (folder: string) => files.filter((f) => f.startsWith(folder) && typeOf(f) === 'pipelineWorkflow');
    expect(pipelines('current').length).toBeGreaterThan(5);
    expect(pipelines('current').filter((f) => !patchedIn(f))).toEqual([]);
    expect(pipelines('v1-child-workflows').filter(patchedIn)).toEqual([]);
  });

  it('has, for every patch id in src/workflows, a history of its new branch (marker) and of its old one (none)', () => {
    // Every `export const X_PATCH = '...'` of the workflows, so a new patch without histories fails here.
    const sources = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) =>
          e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
        );
    const patchIds = sources(path.join(__dirname, '..', '..', 'src', 'workflows')).flatMap((file) =>
      [...fs.readFileSync(file, 'utf8').matchAll(/export const \w+_PATCH = '([^']+)'/g)].map((m) => m[1] as string),
    );
    expect(patchIds.length).toBeGreaterThanOrEqual(10);
    // The job.ts patches run in jobWorkflow (the v1 child); the others in the one-workflow pipeline.
    const jobPatches = new Set(['resubmit-backoff', 'result-from-event', 'quote-after-submit']);
    const has = (file: string, id: string) => patchesOf(file).some((data) => data.includes(`"${id}"`));
    const coverage = patchIds.map((id) => {
      const candidates = files.filter((f) =>
        jobPatches.has(id)
          ? typeOf(f) === 'jobWorkflow'
          : typeOf(f) === 'pipelineWorkflow' && (id === ONE_WORKFLOW_PATCH || has(f, ONE_WORKFLOW_PATCH)),
      );
      return {
        id,
        newBranch: candidates.filter((f) => has(f, id)).length,
        oldBranch: candidates.filter((f) => !has(f, id)).length,
      };
    });
    const missing = coverage
      .flatMap((c) => [...(c.newBranch === 0 ? [`${c.id}: new`] : []), ...(c.oldBranch === 0 ? [`${c.id}: old`] : [])])
      .sort();
    // Branches no recorded scenario reaches yet (named, so closing or opening a gap changes this list).
    expect(missing).toEqual(KNOWN_GAPS);
  });

  it('replays every history without non-determinism', async () => {
    const histories = files.map(load);
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories)) {
      replayed += 1;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(files.length);
  });
});

describe('the production workflow bundle', () => {
  it('holds no zod and no inline source map of the code (an empty one only, which the SDK requires)', () => {
    expect(bundle.code).not.toMatch(/node_modules[\\/]zod/);
    const maps = bundle.code.match(/sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)/g) ?? [];
    expect(maps).toHaveLength(1);
    const map = JSON.parse(Buffer.from((maps[0] as string).split('base64,')[1] as string, 'base64').toString()) as {
      sources: string[];
      mappings: string;
    };
    expect([map.sources, map.mappings]).toEqual([[], '']);
  });

  it('exports workflow functions only from src/workflows/index.ts (the SDK registers every export as a type)', () => {
    expect(Object.keys(workflows).sort()).toEqual([
      'batchWorkflow',
      'jobWorkflow',
      'pipelineWorkflow',
      'webhookRendezvousWorkflow',
      'webhookRouteWorkflow',
    ]);
    for (const value of Object.values(workflows)) expect(typeof value).toBe('function');
  });
});
