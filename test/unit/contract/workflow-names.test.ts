import {
  batchFairnessKey,
  batchWorkflowId,
  FAIRNESS_KEY_MAX_BYTES,
  pipelineWorkflowId,
  routeWorkflowId,
  stepKeyOf,
} from '../../../src/contract/workflow-names';

describe('workflow ids', () => {
  it('are readable and stable: pipeline/<name>, batch/<name>, webhook/<request id>; step keys <name>/job/<step>', () => {
    expect(pipelineWorkflowId('demo')).toBe('pipeline/demo');
    expect(stepKeyOf('demo', 'upscale')).toBe('demo/job/upscale');
    expect(stepKeyOf('demo', 'scenes', 2)).toBe('demo/job/scenes/2');
    expect(batchWorkflowId('nightly')).toBe('batch/nightly');
    expect(routeWorkflowId('req-1')).toBe('webhook/req-1');
  });
});

describe("a batch's default fairness key", () => {
  const bytes = (text: string) => Buffer.byteLength(text);

  it('is the batch id while Temporal takes it (64 bytes: a name of up to 58 characters)', () => {
    expect(batchFairnessKey('batch/nightly')).toBe('batch/nightly');
    const longest = batchWorkflowId('n'.repeat(58));
    expect(batchFairnessKey(longest)).toBe(longest);
  });

  it('is cut to 64 bytes past that, with a digest of the whole id: stable, and distinct for ids with one start', () => {
    const a = batchWorkflowId(`${'n'.repeat(60)}-a`);
    const b = batchWorkflowId(`${'n'.repeat(60)}-b`);
    expect(batchFairnessKey(a)).toMatch(/^batch\/n+~[0-9a-f]{8}$/);
    expect(bytes(batchFairnessKey(a))).toBe(FAIRNESS_KEY_MAX_BYTES);
    expect(batchFairnessKey(a)).toBe(batchFairnessKey(a));
    expect(batchFairnessKey(a)).not.toBe(batchFairnessKey(b));
    // A character is never split: a library's own ids may hold any.
    const wide = batchFairnessKey(`batch/${'é'.repeat(40)}`);
    expect(bytes(wide)).toBeLessThanOrEqual(FAIRNESS_KEY_MAX_BYTES);
    expect(wide).toMatch(/^batch\/é+~[0-9a-f]{8}$/);
  });
});
