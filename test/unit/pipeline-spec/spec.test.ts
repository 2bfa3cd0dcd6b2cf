import { PipelineSpecError, parsePipelineSpec, validatePipelineSpec, type JobStep } from '../../../src/pipeline-spec';

const LONG_FORM = 'service-video-cinema-long-form-from-references';

function errorsOf(value: unknown, rules?: { allowedOrigins: string[] }) {
  const result = validatePipelineSpec(value, rules);
  if (result.ok) throw new Error('expected the spec to be rejected');
  return result.errors;
}

describe('pipeline spec', () => {
  const valid = {
    name: 'promo-1',
    steps: [
      { id: 'generate', model: LONG_FORM, input: { image_urls: ['https://example.com/a.png'] } },
      {
        id: 'upscale',
        model: 'service-upscale-video-fast',
        input: { video_url: { $from: 'generate' } },
        retry: { maxResubmits: 1 },
      },
    ],
    budgetCredits: 500,
  };

  it('accepts a valid spec and fills the retry default', () => {
    const spec = parsePipelineSpec(valid);
    expect((spec.steps[1] as JobStep).retry?.maxResubmits).toBe(1);
    const noRetry = parsePipelineSpec({ ...valid, steps: [valid.steps[0], { ...valid.steps[1], retry: {} }] });
    expect((noRetry.steps[1] as JobStep).retry?.maxResubmits).toBe(0);
  });

  it('rejects names that are unsafe in workflow ids, with the path', () => {
    expect(errorsOf({ ...valid, name: 'a/b' })).toEqual([expect.objectContaining({ path: 'name' })]);
    expect(errorsOf({ ...valid, steps: [{ ...valid.steps[0], id: 'has space' }] })[0]?.path).toBe('steps.0.id');
  });

  it('rejects a reference to a later, unknown or own step', () => {
    const forward = {
      ...valid,
      steps: [
        { ...valid.steps[1], id: 'first' },
        { ...valid.steps[0], id: 'generate' },
      ],
    };
    expect(errorsOf(forward)).toEqual([
      { path: 'steps.0.input.video_url.$from', message: 'must name an earlier step (got "generate")' },
    ]);
    const own = {
      ...valid,
      steps: [valid.steps[0], { ...valid.steps[1], input: { video_url: { $from: 'upscale' } } }],
    };
    expect(errorsOf(own)[0]).toEqual({
      path: 'steps.1.input.video_url.$from',
      message: 'a step cannot read its own output',
    });
  });

  it('rejects a bad reference path and unknown reference keys', () => {
    const badPath = {
      ...valid,
      steps: [valid.steps[0], { ...valid.steps[1], input: { video_url: { $from: 'generate', path: 'videos[x]' } } }],
    };
    expect(errorsOf(badPath)[0]?.path).toBe('steps.1.input.video_url.path');
    const extra = {
      ...valid,
      steps: [valid.steps[0], { ...valid.steps[1], input: { video_url: { $from: 'generate', pth: 'x' } } }],
    };
    expect(errorsOf(extra)[0]?.path).toBe('steps.1.input.video_url.pth');
  });

  it('checks literal inputs against the model schema with references as https placeholders', () => {
    const bad = {
      ...valid,
      steps: [{ ...valid.steps[0], input: { image_urls: ['http://example.com/a.png'], duration: '7' } }],
    };
    const errors = errorsOf(bad);
    expect(errors.map((e) => e.path).sort()).toEqual(['steps.0.input.duration', 'steps.0.input.image_urls.0']);
    const missing = { ...valid, steps: [valid.steps[0], { ...valid.steps[1], model: 'service-horizon-studio' }] };
    expect(errorsOf(missing)).toEqual([expect.objectContaining({ path: 'steps.1.input.audio_url' })]);
  });

  it('accepts a local service origin only when told to', () => {
    const local = {
      ...valid,
      steps: [{ ...valid.steps[0], input: { image_urls: ['http://127.0.0.1:9/files/a.png'] } }],
    };
    expect(validatePipelineSpec(local).ok).toBe(false);
    expect(validatePipelineSpec(local, { allowedOrigins: ['http://127.0.0.1:9'] }).ok).toBe(true);
  });

  it('rejects duplicate step ids, unknown fields and an empty step list', () => {
    expect(errorsOf({ ...valid, steps: [valid.steps[0], valid.steps[0]] })).toEqual([
      expect.objectContaining({ path: 'steps.1.id' }),
    ]);
    expect(errorsOf({ ...valid, colour: 'red' })).toEqual([{ path: 'colour', message: 'is not a known field' }]);
    expect(errorsOf({ ...valid, steps: [] })[0]?.path).toBe('steps');
    expect(errorsOf({ ...valid, budgetCredits: -1 })[0]?.path).toBe('budgetCredits');
  });

  it('throws PipelineSpecError whose message lists path: reason lines', () => {
    expect(() => parsePipelineSpec({ ...valid, name: '' })).toThrow(PipelineSpecError);
    try {
      parsePipelineSpec({ ...valid, name: '' });
    } catch (error) {
      expect((error as PipelineSpecError).message).toMatch(/^invalid pipeline spec:\nname: /);
      expect((error as PipelineSpecError).type).toBe('InvalidPipelineSpec');
    }
  });
});
