import { PayloadBudgetError, PipelineSpecError, ReferenceResolutionError } from '../../../src/pipeline-spec/errors';

describe('spec errors', () => {
  it('PipelineSpecError lists one "path: reason" line per problem and carries the failure type', () => {
    const error = new PipelineSpecError([
      { path: 'steps.0.id', message: 'is required' },
      { path: 'name', message: 'must be safe' },
    ]);
    expect(error.message).toBe('invalid pipeline spec:\nsteps.0.id: is required\nname: must be safe');
    expect(error.code).toBe('invalid_pipeline_spec');
    expect(error.type).toBe('InvalidPipelineSpec');
    expect(error.errors).toHaveLength(2);
  });

  it('ReferenceResolutionError keeps the location of the reference', () => {
    const error = new ReferenceResolutionError('video_url: step "a" has no output to read', 'video_url');
    expect(error).toMatchObject({
      code: 'reference_unresolved',
      location: 'video_url',
      name: 'ReferenceResolutionError',
    });
  });

  it('PayloadBudgetError keeps its figures', () => {
    const error = new PayloadBudgetError('too big', 'spec', 200, 100, [{ path: 'prompt', bytes: 150 }]);
    expect(error).toMatchObject({ code: 'payload_too_large', label: 'spec', bytes: 200, budget: 100 });
    expect(error.largest).toEqual([{ path: 'prompt', bytes: 150 }]);
  });
});
