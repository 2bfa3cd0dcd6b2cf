import {
  batchWorkflowId,
  jobWorkflowId,
  pipelineWorkflowId,
  rendezvousWorkflowId,
} from '../../../src/contract/workflow-names';

describe('workflow ids', () => {
  it('are readable and stable: pipeline/<name>, <name>/job/<step>, batch/<name>, webhook/<request id>', () => {
    expect(pipelineWorkflowId('demo')).toBe('pipeline/demo');
    expect(jobWorkflowId('demo', 'upscale')).toBe('demo/job/upscale');
    expect(batchWorkflowId('nightly')).toBe('batch/nightly');
    expect(rendezvousWorkflowId('req-1')).toBe('webhook/req-1');
  });
});
