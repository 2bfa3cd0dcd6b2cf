import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { bundleReelflowWorkflows } from '../integration/workflow-harness';
import * as workflows from '../../src/workflows';
import { ONE_WORKFLOW_PATCH, OPERATOR_CONSOLE_PATCH } from '../../src/workflows/pipeline';
import { PREFLIGHT_PATCH } from '../../src/workflows/steps/preflight';
import { EARLY_STATUS_CHECK_PATCH } from '../../src/workflows/steps/wait';

/**
 * Replays recorded histories against the current code: those of the previous version
 * (histories/v1-child-workflows: pipeline, job, rendezvous-era batch; executions started on it must
 * finish on this worker) and those of the current one (histories/current: the one-workflow pipeline
 * and the route). A change that makes the code issue different commands for the same history
 * (non-determinism) fails here. Re-record with `npx tsx test/replay/record-histories.ts` after a
 * compatible change.
 */
const root = path.join(__dirname, 'histories');
const folders = ['v1-child-workflows', 'current'];
const files = folders.flatMap((folder) => {
  const dir = path.join(root, folder);
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => path.join(folder, f)) : [];
});

/** Reads one recorded history (base64 protobuf inside JSON, written by maybeRecordHistory). */
function load(file: string) {
  const record = JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')) as { workflowId: string; encoding: string; history: string };
  if (record.encoding !== 'protobuf-base64') throw new Error(`${file}: unknown encoding ${record.encoding}`);
  return { workflowId: `${file}:${record.workflowId}`, history: temporal.api.history.v1.History.decode(Buffer.from(record.history, 'base64')) };
}

const typeOf = (file: string) => load(file).history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
/** The ids of the patches a history recorded (core_patch markers carry the id as a JSON payload). */
const patchesOf = (file: string): string[] =>
  (load(file).history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    return Object.values(marker.details ?? {}).flatMap((payloads) => (payloads.payloads ?? []).map((p) => Buffer.from(p.data ?? []).toString()));
  });

let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  bundle = await bundleReelflowWorkflows();
});

describe('replay of recorded workflow histories', () => {
  it('has histories of every workflow type of both versions to replay', () => {
    const types = (folder: string) => new Set(files.filter((f) => f.startsWith(folder)).map(typeOf));
    expect([...types('v1-child-workflows')].sort()).toEqual(expect.arrayContaining(['batchWorkflow', 'jobWorkflow', 'pipelineWorkflow']));
    expect([...types('current')].sort()).toEqual(expect.arrayContaining(['pipelineWorkflow', 'webhookRouteWorkflow']));
    // The current pipelines ran the one-workflow path (its patch marker), the old ones did not.
    const patchedIn = (file: string) => patchesOf(file).some((data) => data.includes(ONE_WORKFLOW_PATCH));
    const pipelines = (folder: string) => files.filter((f) => f.startsWith(folder) && typeOf(f) === 'pipelineWorkflow');
    expect(pipelines('current').length).toBeGreaterThan(5);
    expect(pipelines('current').filter((f) => !patchedIn(f))).toEqual([]);
    expect(pipelines('v1-child-workflows').filter(patchedIn)).toEqual([]);
    // Later patches of the one-workflow pipeline are replayed both ways: histories recorded before them and with them.
    for (const patch of [PREFLIGHT_PATCH, EARLY_STATUS_CHECK_PATCH, OPERATOR_CONSOLE_PATCH]) {
      const withPatch = pipelines('current').filter((f) => patchesOf(f).some((data) => data.includes(`"${patch}"`)));
      expect({ patch, withPatch: withPatch.length > 0, without: withPatch.length < pipelines('current').length }).toEqual({ patch, withPatch: true, without: true });
    }
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
    const map = JSON.parse(Buffer.from((maps[0] as string).split('base64,')[1] as string, 'base64').toString()) as { sources: string[]; mappings: string };
    expect([map.sources, map.mappings]).toEqual([[], '']);
  });

  it('exports workflow functions only from src/workflows/index.ts (the SDK registers every export as a type)', () => {
    expect(Object.keys(workflows).sort()).toEqual(['batchWorkflow', 'jobWorkflow', 'pipelineWorkflow', 'webhookRendezvousWorkflow', 'webhookRouteWorkflow']);
    for (const value of Object.values(workflows)) expect(typeof value).toBe('function');
  });
});
