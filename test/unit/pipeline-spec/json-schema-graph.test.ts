import Ajv2020 from 'ajv/dist/2020';
import { pipelineSpecJsonSchema } from '../../../src/pipeline-spec/json-schema';
import { validatePipelineSpec } from '../../../src/pipeline-spec/spec';

const check = new Ajv2020({ allErrors: true, strict: false }).compile(pipelineSpecJsonSchema());
const LONG_FORM = 'service-video-cinema-long-form-from-references';

describe('the JSON Schema of a version-2 spec (the graph)', () => {
  const graph = {
    version: 2,
    name: 'ad',
    steps: [
      {
        id: 'scenes',
        model: LONG_FORM,
        input: { image_urls: [{ $item: 'image' }], prompt: { $item: 'prompt' }, duration: '5' },
        each: [{ image: 'https://example.com/a.png', prompt: 'one' }],
        onFailure: 'continue',
      },
      {
        id: 'again',
        model: LONG_FORM,
        input: { image_urls: { $from: 'scenes', path: '[*].videos[0].url' } },
        after: ['scenes'],
      },
    ],
  };

  it('accepts $item in any input field, a [*] reference for a URL list, each, after and onFailure', () => {
    expect({ valid: check(graph), errors: check.errors ?? null }).toEqual({ valid: true, errors: null });
    expect(validatePipelineSpec(graph).ok).toBe(true);
  });

  it('refuses what the spec refuses: a version other than 1 or 2, an unknown onFailure', () => {
    expect(check({ ...graph, version: 3 })).toBe(false);
    expect(check({ ...graph, steps: [{ ...graph.steps[0], onFailure: 'ignore' }] })).toBe(false);
  });
});
