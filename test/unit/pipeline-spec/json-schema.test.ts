import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { pipelineSpecJsonSchema, SCHEMA_FILES, schemaFiles } from '../../../src/pipeline-spec/json-schema';
import { validatePipelineSpec } from '../../../src/pipeline-spec/spec';

const ROOT = path.join(__dirname, '..', '..', '..');
const schemaPath = (name: string) => path.join(ROOT, 'schemas', name);
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;

const ajv = new Ajv2020({ allErrors: true, strict: false });
const checkSpec = ajv.compile(readJson(schemaPath(SCHEMA_FILES.pipelineSpec)));
const checkManifest = ajv.compile(readJson(schemaPath(SCHEMA_FILES.batchManifest)));
const exampleSpecs = fs.readdirSync(path.join(ROOT, 'examples')).filter((f) => f.endsWith('.json'));

describe('the JSON Schemas of spec files (schemas/)', () => {
  it.each(Object.entries(schemaFiles()))(
    'schemas/%s is what the zod schemas generate (else run `npm run schemas`)',
    (name, text) => {
      expect(fs.readFileSync(schemaPath(name), 'utf8')).toBe(text);
    },
  );

  it.each(exampleSpecs)('examples/%s names the spec schema in $schema and follows it', (file) => {
    const example = readJson(path.join(ROOT, 'examples', file));
    expect(example.$schema).toBe(`../schemas/${SCHEMA_FILES.pipelineSpec}`);
    expect(fs.existsSync(path.resolve(ROOT, 'examples', example.$schema as string))).toBe(true);
    expect({ file, valid: checkSpec(example), errors: checkSpec.errors ?? null }).toEqual({
      file,
      valid: true,
      errors: null,
    });
  });

  it("checks each step's input against its model's fields, as editors show it", () => {
    const spec = {
      name: 'typo',
      steps: [
        {
          id: 'upscale',
          model: 'service-upscale-video-fast',
          input: { video_url: 'clip.mp4', procesing_speed: 'standard' },
        },
      ],
    };
    expect(checkSpec(spec)).toBe(false);
    expect(checkSpec.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ keyword: 'additionalProperties', params: { additionalProperty: 'procesing_speed' } }),
      ]),
    );
    const referenced = {
      name: 'chain',
      steps: [
        { id: 'generate', model: 'service-video-cinema-long-form-from-references', input: { image_urls: ['a.png'] } },
        { id: 'upscale', model: 'service-upscale-video-fast', input: { video_url: { $from: 'generate' } } },
      ],
    };
    expect(checkSpec(referenced)).toBe(true);
    expect(checkSpec({ ...referenced, steps: [] })).toBe(false);
  });

  it('describes JSON batch manifests: items as spec paths, inline specs or rows with overrides', () => {
    const inline = readJson(path.join(ROOT, 'examples', 'upscale-clip.json'));
    const manifest = {
      $schema: `../schemas/${SCHEMA_FILES.batchManifest}`,
      name: 'nightly',
      concurrency: 2,
      items: [
        'revoice-clip.json',
        inline,
        { spec: 'upscale-clip.json', name: 'second', 'upscale.processing_speed': 'standard' },
      ],
    };
    expect({ valid: checkManifest(manifest), errors: checkManifest.errors ?? null }).toEqual({
      valid: true,
      errors: null,
    });
    expect(checkManifest(manifest.items)).toBe(true);
    expect(checkManifest({ ...manifest, concurrency: 0 })).toBe(false);
    expect(checkManifest({ ...manifest, items: [{ spec: 'a.json', colour: 'red' }] })).toBe(false);
  });

  it('the spec parser accepts a $schema key and leaves it out of the spec', () => {
    const example = readJson(path.join(ROOT, 'examples', 'upscale-clip.json'));
    const checked = validatePipelineSpec({
      ...example,
      steps: (example.steps as object[]).map((s) => ({ ...s, input: { video_url: 'https://media.test/clip.mp4' } })),
    });
    expect(checked.ok).toBe(true);
    expect(checked.ok && checked.value).not.toHaveProperty('$schema');
  });
});

const checkGraph = new Ajv2020({ allErrors: true, strict: false }).compile(pipelineSpecJsonSchema());
const GRAPH_MODEL = 'service-video-cinema-long-form-from-references';

describe('the JSON Schema of a version-2 spec (the graph)', () => {
  const graph = {
    version: 2,
    name: 'ad',
    steps: [
      {
        id: 'scenes',
        model: GRAPH_MODEL,
        input: { image_urls: [{ $item: 'image' }], prompt: { $item: 'prompt' }, duration: '5' },
        each: [{ image: 'https://example.com/a.png', prompt: 'one' }],
        onFailure: 'continue',
      },
      {
        id: 'again',
        model: GRAPH_MODEL,
        input: { image_urls: { $from: 'scenes', path: '[*].videos[0].url' } },
        after: ['scenes'],
      },
    ],
  };

  it('accepts $item in any input field, a [*] reference for a URL list, each, after and onFailure', () => {
    expect({ valid: checkGraph(graph), errors: checkGraph.errors ?? null }).toEqual({ valid: true, errors: null });
    expect(validatePipelineSpec(graph).ok).toBe(true);
  });

  it('refuses what the spec refuses: a version other than 1 or 2, an unknown onFailure', () => {
    expect(checkGraph({ ...graph, version: 3 })).toBe(false);
    expect(checkGraph({ ...graph, steps: [{ ...graph.steps[0], onFailure: 'ignore' }] })).toBe(false);
  });
});
