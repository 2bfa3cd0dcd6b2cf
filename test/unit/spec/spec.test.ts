import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFileStore } from '../../../src/media/store';
import type { MediaRef } from '../../../src/media/reference';
import {
  EXAMPLE_INPUTS,
  PipelineSpecError,
  REFERENCE_PLACEHOLDER_URL,
  ReferenceResolutionError,
  from,
  parsePipelineSpec,
  parseReferencePath,
  pipeline,
  readPath,
  resolveReferences,
  threeStepPipeline,
  validatePipelineSpec,
} from '../../../src/spec';
import threeStepJson from '../../../examples/three-step.json';
import { loadSpecFile } from '../../../src/cli/lib/spec-files';

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
    expect(spec.steps[1]?.retry?.maxResubmits).toBe(1);
    const noRetry = parsePipelineSpec({ ...valid, steps: [valid.steps[0], { ...valid.steps[1], retry: {} }] });
    expect(noRetry.steps[1]?.retry?.maxResubmits).toBe(0);
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

  it('validates on build', () => {
    expect(() =>
      pipeline('x')
        .step('a', 'service-upscale-video-fast', { video_url: from('nope') })
        .build(),
    ).toThrow(/steps\.0\.input\.video_url\.\$from/);
  });

  it('keeps examples/three-step.json in step with the canonical example (its local files as the CLI loads them)', async () => {
    expect(threeStepJson.steps[0]?.input.image_urls).toEqual(EXAMPLE_INPUTS.imageUrls);
    expect(threeStepJson.steps[1]?.input.audio_url).toEqual(EXAMPLE_INPUTS.audioUrl);
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-example-store-'));
    const loaded = await loadSpecFile(path.join(__dirname, '../../../examples/three-step.json'), undefined, {
      store: createFileStore(storeDir),
    });
    fs.rmSync(storeDir, { recursive: true, force: true });
    const imageUrls = (loaded.steps[0]?.input as { image_urls: MediaRef[] }).image_urls;
    const audioUrl = (loaded.steps[1]?.input as { audio_url: MediaRef }).audio_url;
    expect(audioUrl).toMatchObject({ $media: expect.stringMatching(/^sha256:/) });
    // The CLI archives what a later step or the user still needs unless the spec says otherwise.
    expect(loaded).toEqual({
      ...threeStepPipeline({ ...EXAMPLE_INPUTS, imageUrls, audioUrl }),
      archive: 'on-expiry-risk',
    });
    expect(loaded.steps.map((s) => s.model)).toEqual([
      LONG_FORM,
      'service-horizon-studio',
      'service-upscale-video-fast',
    ]);
  });
});

describe('references', () => {
  const output = {
    videos: [{ url: 'https://cdn.example.com/out.mp4' }, { url: 'https://cdn.example.com/b.mp4' }],
    request_id: 'r1',
  };

  it('parses and reads paths', () => {
    expect(parseReferencePath('videos[0].url')).toEqual(['videos', 0, 'url']);
    expect(parseReferencePath('request_id')).toEqual(['request_id']);
    for (const bad of ['', '.a', 'a.', 'a..b', '[0]', 'a[b]', 'a b']) expect(parseReferencePath(bad)).toBeNull();
    expect(readPath(output, 'videos[1].url')).toBe('https://cdn.example.com/b.mp4');
    expect(readPath(output, 'videos[5].url')).toBeUndefined();
  });

  it('resolves references anywhere in an input, default path videos[0].url', () => {
    const input = {
      video_url: { $from: 'a' },
      video_urls: ['https://x.example/1.mp4', { $from: 'a', path: 'videos[1].url' }],
      prompt: 'p',
    };
    expect(resolveReferences(input, { a: output })).toEqual({
      video_url: 'https://cdn.example.com/out.mp4',
      video_urls: ['https://x.example/1.mp4', 'https://cdn.example.com/b.mp4'],
      prompt: 'p',
    });
  });

  it('names the field when a reference cannot be resolved', () => {
    expect(() => resolveReferences({ video_url: { $from: 'a', path: 'videos[3].url' } }, { a: output })).toThrow(
      new ReferenceResolutionError('video_url: output of step "a" has no string at videos[3].url', 'video_url'),
    );
    expect(() => resolveReferences({ v: [{ $from: 'b' }] }, { a: output })).toThrow(/v\.0: step "b" has no output/);
  });

  it('uses a valid https placeholder for validation', () => {
    expect(REFERENCE_PLACEHOLDER_URL.startsWith('https://')).toBe(true);
  });
});
