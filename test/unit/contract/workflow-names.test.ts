import { batchWorkflowId, pipelineWorkflowId, routeWorkflowId, stepKeyOf } from '../../../src/contract/workflow-names';

describe('workflow ids', () => {
  it('are readable and stable: pipeline/<name>, batch/<name>, webhook/<request id>; step keys <name>/job/<step>', () => {
    expect(pipelineWorkflowId('demo')).toBe('pipeline/demo');
    expect(stepKeyOf('demo', 'upscale')).toBe('demo/job/upscale');
    expect(stepKeyOf('demo', 'scenes', 2)).toBe('demo/job/scenes/2');
    expect(batchWorkflowId('nightly')).toBe('batch/nightly');
    expect(routeWorkflowId('req-1')).toBe('webhook/req-1');
  });
});
