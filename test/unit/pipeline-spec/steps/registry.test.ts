import { approvalStepKind } from '../../../../src/pipeline-spec/steps/approval';
import { jobStepKind } from '../../../../src/pipeline-spec/steps/job';
import { pipelineStepSchema, STEP_KINDS, stepKindOf } from '../../../../src/pipeline-spec/steps/registry';

describe('the table of step kinds', () => {
  const step = { id: 'up', model: 'service-upscale-video-fast', input: { video_url: 'https://example.com/a.mp4' } };

  const gate = { id: 'review', op: 'approval', input: {} };

  it('builds the step schema from its kinds: the paid job (`model`) and the approval gate (`"op": "approval"`)', () => {
    expect(Object.keys(STEP_KINDS)).toEqual(['model', 'approval']);
    expect(pipelineStepSchema.parse(step)).toEqual(step);
    expect(pipelineStepSchema.parse(gate)).toEqual({ ...gate, timeoutHours: 72, onTimeout: 'reject' });
  });

  it('finds a step kind by the key it has', () => {
    expect(stepKindOf(pipelineStepSchema.parse(step))).toBe(jobStepKind);
    expect(stepKindOf(pipelineStepSchema.parse(gate))).toBe(approvalStepKind);
  });

  it('refuses a step of no kind, naming the kinds there are', () => {
    expect(() => stepKindOf({ id: 'x', input: {} } as never)).toThrow('step x has no kind (none of model, approval)');
  });
});
