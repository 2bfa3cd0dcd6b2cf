import { jobStepKind, jobStepSchema } from '../../../../src/pipeline-spec/steps/job';
import { pipelineStepSchema, STEP_KINDS, stepKindOf } from '../../../../src/pipeline-spec/steps/registry';

describe('the table of step kinds', () => {
  const step = { id: 'up', model: 'service-upscale-video-fast', input: { video_url: 'https://example.com/a.mp4' } };

  it("builds the step schema from its one kind, the paid job marked by `model`, with the graph's fields", () => {
    expect(Object.keys(STEP_KINDS)).toEqual(['model']);
    const { shape } = pipelineStepSchema as unknown as { shape: object };
    expect(Object.keys(shape)).toEqual([...Object.keys(jobStepSchema.shape), 'after', 'each', 'onFailure']);
    expect(pipelineStepSchema.parse(step)).toEqual(step);
    expect(pipelineStepSchema.safeParse({ ...step, other: 1 }).success).toBe(false);
  });

  it('finds a step kind by the key it has', () => {
    expect(stepKindOf(pipelineStepSchema.parse(step))).toBe(jobStepKind);
  });

  it('refuses a step of no kind, naming the kinds there are', () => {
    expect(() => stepKindOf({ id: 'x', input: {} } as never)).toThrow('step x has no kind (none of model)');
  });
});
