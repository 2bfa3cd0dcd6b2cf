import { toFieldErrors } from '../../../../src/contract';
import { jobStepKind } from '../../../../src/pipeline-spec/steps/job';
import { opStepKind } from '../../../../src/pipeline-spec/steps/op';
import { approvalStepKind } from '../../../../src/pipeline-spec/steps/approval';
import { pipelineStepSchema, STEP_KINDS, stepKindOf } from '../../../../src/pipeline-spec/steps/registry';

describe('the table of step kinds', () => {
  const step = { id: 'up', model: 'service-upscale-video-fast', input: { video_url: 'https://example.com/a.mp4' } };
  const op = { id: 'cut', op: 'trim', input: { video: { $from: 'up' }, start: 0, end: 1 } };
  const errorsOf = (value: unknown) => {
    const parsed = pipelineStepSchema.safeParse(value);
    return parsed.success ? [] : toFieldErrors(parsed.error);
  };

  const gate = { id: 'review', op: 'approval', input: {} };

  it("builds the step schema from its kinds, the paid job, the local operation and the approval gate, with the graph's fields", () => {
    expect(Object.keys(STEP_KINDS)).toEqual(['model', 'op', 'approval']);
    expect(pipelineStepSchema.parse(gate)).toEqual({ ...gate, timeoutHours: 72, onTimeout: 'reject' });
    expect(pipelineStepSchema.parse(step)).toEqual(step);
    expect(pipelineStepSchema.parse(op)).toEqual(op);
    const graphFields = { after: ['a'], each: [{ n: 1 }], onFailure: 'continue' as const };
    expect(pipelineStepSchema.parse({ ...step, ...graphFields })).toEqual({ ...step, ...graphFields });
    expect(pipelineStepSchema.parse({ ...op, ...graphFields })).toEqual({ ...op, ...graphFields });
    expect(pipelineStepSchema.safeParse({ ...step, other: 1 }).success).toBe(false);
  });

  it('finds a step kind by the key it has', () => {
    expect(stepKindOf(pipelineStepSchema.parse(step))).toBe(jobStepKind);
    expect(stepKindOf(pipelineStepSchema.parse(op))).toBe(opStepKind);
    expect(stepKindOf(pipelineStepSchema.parse(gate))).toBe(approvalStepKind);
  });

  it("reports a step's errors against its own kind's schema, never as an invalid union", () => {
    expect(errorsOf({ ...op, op: 'blur' })).toEqual([{ path: 'op', message: expect.stringContaining('"concat"') }]);
    expect(errorsOf({ ...op, retry: {} })).toEqual([{ path: 'retry', message: 'is not a known field' }]);
    expect(errorsOf({ ...step, model: 'nope' })).toEqual([{ path: 'model', message: expect.any(String) }]);
  });

  it('reports a step of no kind as one without `model`, as version 1 did', () => {
    expect(errorsOf({ id: 'x', input: {} })).toEqual([{ path: 'model', message: expect.any(String) }]);
  });

  it('refuses a step of no kind, naming the kinds there are', () => {
    expect(() => stepKindOf({ id: 'x', input: {} } as never)).toThrow(
      'step x has no kind (none of model, op, approval)',
    );
  });
});
