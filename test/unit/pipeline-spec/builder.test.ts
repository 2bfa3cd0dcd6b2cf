import { from, item, parsePipelineSpec, pipeline, PipelineSpecError } from '../../../src/pipeline-spec';

const LONG_FORM = 'service-video-cinema-long-form-from-references';

describe('builder', () => {
  it('produces the same spec as the JSON form', () => {
    const built = pipeline('promo-1')
      .step('generate', LONG_FORM, { image_urls: ['https://example.com/a.png'] })
      .step('upscale', 'service-upscale-video-fast', { video_url: from('generate') }, { maxResubmits: 1 })
      .budget(500)
      .build();
    expect(built).toEqual(
      parsePipelineSpec({
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
      }),
    );
  });

  it('builds a graph (version 2): fan-out items, after and onFailure, as the JSON form', () => {
    const built = pipeline('ad')
      .step(
        'scenes',
        LONG_FORM,
        { image_urls: [item('image')], prompt: item('prompt') },
        { each: [{ image: 'https://example.com/a.png', prompt: 'one' }], onFailure: 'continue' },
      )
      .step(
        'up',
        'service-upscale-video-fast',
        { video_url: from('scenes', '[0].videos[0].url') },
        { after: ['scenes'] },
      )
      .build();
    expect(built).toEqual(
      parsePipelineSpec({
        version: 2,
        name: 'ad',
        steps: [
          {
            id: 'scenes',
            model: LONG_FORM,
            input: { image_urls: [{ $item: 'image' }], prompt: { $item: 'prompt' } },
            each: [{ image: 'https://example.com/a.png', prompt: 'one' }],
            onFailure: 'continue',
          },
          {
            id: 'up',
            model: 'service-upscale-video-fast',
            input: { video_url: { $from: 'scenes', path: '[0].videos[0].url' } },
            after: ['scenes'],
          },
        ],
      }),
    );
    expect(
      pipeline('g')
        .graph()
        .step('a', LONG_FORM, { image_urls: ['https://example.com/a.png'] })
        .build(),
    ).toHaveProperty('version', 2);
  });

  it('validates on build', () => {
    expect(() =>
      pipeline('x')
        .step('a', 'service-upscale-video-fast', { video_url: from('nope') })
        .build(),
    ).toThrow(/steps\.0\.input\.video_url\.\$from/);
  });

  it('sets the step options it is given, and only those', () => {
    const spec = pipeline('opts')
      .step(
        'a',
        'service-upscale-video-fast',
        { video_url: 'https://m.test/a.mp4' },
        { pacing: { firstPollSeconds: 9 } },
      )
      .step('b', 'service-upscale-video-fast', { video_url: from('a') })
      .build();
    expect(spec.steps[0]).toMatchObject({ pacing: { firstPollSeconds: 9 } });
    expect(spec.steps[0]).not.toHaveProperty('budgetCredits');
    expect(spec).not.toHaveProperty('budgetCredits');
  });

  it('throws PipelineSpecError naming the path of a bad literal input', () => {
    const build = () =>
      pipeline('bad').step('a', 'service-upscale-video-fast', { video_url: 'http://m.test/a.mp4' }).build();
    expect(build).toThrow(PipelineSpecError);
    expect(build).toThrow(/steps\.0\.input\.video_url: must use https/);
  });

  it('accepts a local origin when the build is given the rule', () => {
    const spec = pipeline('local')
      .step('a', 'service-upscale-video-fast', { video_url: 'http://127.0.0.1:8787/files/a.mp4' })
      .build({ allowedOrigins: ['http://127.0.0.1:8787'] });
    expect(spec.steps[0]?.input.video_url).toBe('http://127.0.0.1:8787/files/a.mp4');
  });
});

describe('from', () => {
  it('references a step’s first video URL by default, or the path given', () => {
    expect(from('a')).toEqual({ $from: 'a' });
    expect(from('a', 'videos[1].url')).toEqual({ $from: 'a', path: 'videos[1].url' });
  });
});
