import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { bundleReelflowWorkflows } from '../integration/workflow-harness';

/**
 * Replays recorded histories of the job, pipeline and batch workflows against the current code.
 * A change that makes the code issue different commands for the same history (non-determinism)
 * fails here. Re-record with `npx tsx test/replay/record-histories.ts` after a compatible change.
 */
const dir = path.join(__dirname, 'histories');
const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : [];

/** Reads one recorded history (base64 protobuf inside JSON, written by maybeRecordHistory). */
function load(file: string) {
  const record = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { workflowId: string; encoding: string; history: string };
  if (record.encoding !== 'protobuf-base64') throw new Error(`${file}: unknown encoding ${record.encoding}`);
  return { workflowId: `${file}:${record.workflowId}`, history: temporal.api.history.v1.History.decode(Buffer.from(record.history, 'base64')) };
}

let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  bundle = await bundleReelflowWorkflows();
});

describe('replay of recorded workflow histories', () => {
  it('has histories of every workflow type to replay', () => {
    const types = new Set(files.map((file) => load(file).history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name));
    expect([...types].sort()).toEqual(expect.arrayContaining(['batchWorkflow', 'jobWorkflow', 'pipelineWorkflow']));
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
