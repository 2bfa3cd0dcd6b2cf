import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { bundleReelflowWorkflows } from '../integration/workflow-harness';
import * as workflows from '../../src/workflows';

/**
 * Replays the histories recorded from the current build (histories/current) against the current
 * code. With Worker Versioning a pinned execution never meets a newer build, so histories of earlier
 * builds are not kept (docs/safe-deploys.md); what this catches is a change that makes the code issue
 * different commands for the same history within one build, e.g. a change of a workflow's code
 * without a new build id. Re-record with `npm run record-histories` after changing workflow code.
 */
const root = path.join(__dirname, 'histories');
const files = fs
  .readdirSync(path.join(root, 'current'))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => path.join('current', f));

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

let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  bundle = await bundleReelflowWorkflows();
});

describe('replay of recorded workflow histories', () => {
  it('has histories of every workflow type, and no patch marker in any of them', () => {
    expect([...new Set(files.map(typeOf))].sort()).toEqual([
      'batchWorkflow',
      'pipelineWorkflow',
      'webhookRouteWorkflow',
    ]);
    expect(files.filter((f) => typeOf(f) === 'pipelineWorkflow').length).toBeGreaterThan(5);
    // The workflows fold every change into plain code: a patched() call would record a marker.
    expect(files.filter((f) => patchesOf(f).length > 0)).toEqual([]);
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
    expect(Object.keys(workflows).sort()).toEqual(['batchWorkflow', 'pipelineWorkflow', 'webhookRouteWorkflow']);
    for (const value of Object.values(workflows)) expect(typeof value).toBe('function');
  });
});
