import { z } from 'zod';
import { MODEL_IDS, createModelInputSchemas } from '../contract';
import { pipelineSpecSchema, safeNameSchema, stepReferenceSchema } from './spec';
import { pipelineStepShapes } from './steps/registry';
import { OP_NAMES, createOpInputSchemas } from './steps/op';

/**
 * JSON Schemas of the spec files people write, generated from the zod schemas that validate them, so
 * editors complete and check a spec as it is typed (`"$schema": "../schemas/pipeline-spec.schema.json"`).
 * `npm run schemas` writes them to schemas/; a test fails when the files there are stale. The schemas
 * describe what a spec file may say; `reelflow run` still validates everything (the address rules,
 * references to earlier steps) and says why with a field path.
 */

type Json = Record<string, unknown>;

/** The published files, by name under schemas/. */
export const SCHEMA_FILES = {
  pipelineSpec: 'pipeline-spec.schema.json',
  batchManifest: 'batch-manifest.schema.json',
} as const;

const SCHEMA_KEY_DOC = 'The JSON Schema this file follows (editors read it; reelflow ignores it).';

function toJson(schema: z.ZodType): Json {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  delete json.$schema;
  return json;
}

/** A URL field of a model input in a spec file: a URL or data URI, a local path (the CLI uploads it), an earlier step's output or a stored medium. */
const MEDIA_VALUE = {
  anyOf: [
    { type: 'string', description: 'An https URL, a data: URI, or a path relative to the spec file' },
    { $ref: '#/$defs/stepReference' },
    { $ref: '#/$defs/mediaReference' },
  ],
};

/** A fan-out step's item in its input (version 2): any field may read it. */
const ITEM_VALUE = { $ref: '#/$defs/itemReference' };

/**
 * One model's input as a spec writes it: the model's own schema, with references allowed in every URL
 * field, a list of a fan-out step's URLs (`[*]`) in every URL-list field, and the item (`$item`) anywhere.
 */
function specInputSchema(model: (typeof MODEL_IDS)[number]): Json {
  const input = toJson(createModelInputSchemas()[model]);
  const properties = input.properties as Record<string, Json>;
  for (const [field, schema] of Object.entries(properties)) {
    if (/_url$/.test(field)) properties[field] = { anyOf: [...MEDIA_VALUE.anyOf, ITEM_VALUE] };
    else if (/_urls$/.test(field))
      properties[field] = {
        anyOf: [{ ...schema, items: { anyOf: [...MEDIA_VALUE.anyOf, ITEM_VALUE] } }, { $ref: '#/$defs/stepReference' }],
      };
    else properties[field] = { anyOf: [schema, ITEM_VALUE] };
  }
  return input;
}

/**
 * One operation's input as a spec writes it: its fields, each media field (`video`, `audio`, `videos[]`) a
 * media value or an item's, `videos` also a fan-out step's list (`[*]`), any other field an item's value.
 */
function opInputJsonSchema(op: (typeof OP_NAMES)[number]): Json {
  const input = toJson(createOpInputSchemas()[op]);
  const properties = input.properties as Record<string, Json>;
  const media = { anyOf: [...MEDIA_VALUE.anyOf, ITEM_VALUE] };
  for (const [field, schema] of Object.entries(properties)) {
    if (field === 'video' || field === 'audio') properties[field] = media;
    else if (field === 'videos')
      properties[field] = { anyOf: [{ ...schema, items: media }, { $ref: '#/$defs/stepReference' }] };
    else properties[field] = { anyOf: [schema, ITEM_VALUE] };
  }
  return input;
}

/** The pipeline spec (src/pipeline-spec/spec.ts) as a JSON Schema, each step's `input` checked against its model's fields. */
export function pipelineSpecJsonSchema(): Json {
  const spec = toJson(pipelineSpecSchema);
  const steps = (spec.properties as Record<string, Json>).steps as Json;
  // With several kinds a step is parsed by its kind (steps/registry.ts), which JSON Schema says as the kinds' union.
  const shapes = Object.keys(steps.items as Json).length === 0 ? toJson(pipelineStepShapes) : (steps.items as Json);
  steps.items = {
    ...shapes,
    allOf: [
      ...MODEL_IDS.map((model) => ({
        if: { properties: { model: { const: model } }, required: ['model'] },
        then: { properties: { input: specInputSchema(model) } },
      })),
      ...OP_NAMES.map((op) => ({
        if: { properties: { op: { const: op } }, required: ['op'] },
        then: { properties: { input: opInputJsonSchema(op) } },
      })),
    ],
  };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'reelflow pipeline spec',
    description:
      'A named, ordered list of steps, each a model of the service and its input; an input value may be an earlier step\'s output ({"$from": "<step id>"}). With "version": 2 the steps form a graph: each runs once the steps it reads and those in "after" are done, a step with "each" runs once per item. docs/pipelines.md',
    ...spec,
    properties: { $schema: { type: 'string', description: SCHEMA_KEY_DOC }, ...(spec.properties as Json) },
    $defs: {
      stepReference: {
        description:
          "An earlier step's output (default path videos[0].url); a fan-out step's list: [*].videos[0].url, or [n].videos[0].url for item n",
        ...toJson(stepReferenceSchema),
      },
      itemReference: {
        description: 'A field of the item a fan-out step (each) runs for; a dotted path allowed',
        type: 'object',
        properties: { $item: { type: 'string' } },
        required: ['$item'],
        additionalProperties: false,
      },
      mediaReference: {
        description: 'A file in the media store (written by the CLI for local paths)',
        type: 'object',
        properties: {
          $media: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
          type: { type: 'string' },
          bytes: { type: 'integer', minimum: 0 },
          url: { type: 'string' },
        },
        required: ['$media', 'type', 'bytes'],
        additionalProperties: false,
      },
    },
  };
}

/** A row override key: `<step id>.<input field>`. */
const OVERRIDE_KEY = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\\.[A-Za-z0-9_]+$';

/** A JSON batch manifest (src/cli/lib/manifest.ts, docs/batches.md): `{ name?, concurrency?, items }` or the items alone. */
export function batchManifestJsonSchema(): Json {
  const spec = pipelineSpecJsonSchema();
  const { $schema: _dialect, $defs, ...inlineSpec } = spec;
  const item = {
    anyOf: [
      { type: 'string', description: 'A spec file, relative to the manifest' },
      { $ref: '#/$defs/pipelineSpec' },
      {
        type: 'object',
        description: 'A row: a spec (file or inline), a name, and <step>.<field> overrides of its inputs',
        properties: {
          spec: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/pipelineSpec' }] },
          name: toJson(safeNameSchema),
        },
        patternProperties: { [OVERRIDE_KEY]: {} },
        required: ['spec'],
        additionalProperties: false,
      },
    ],
  };
  const items = { type: 'array', minItems: 1, items: item };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'reelflow batch manifest (JSON)',
    description: 'The pipelines of one batch (reelflow batch <manifest.json>). docs/batches.md',
    anyOf: [
      {
        type: 'object',
        properties: {
          $schema: { type: 'string', description: SCHEMA_KEY_DOC },
          name: toJson(safeNameSchema),
          concurrency: { type: 'integer', minimum: 1 },
          items,
        },
        required: ['items'],
        additionalProperties: false,
      },
      items,
    ],
    $defs: { ...($defs as Json), pipelineSpec: inlineSpec },
  };
}

/** Every published schema as the file's text (two-space JSON and a final newline, as prettier writes it). */
export function schemaFiles(): Record<string, string> {
  const text = (value: Json) => `${JSON.stringify(value, null, 2)}\n`;
  return {
    [SCHEMA_FILES.pipelineSpec]: text(pipelineSpecJsonSchema()),
    [SCHEMA_FILES.batchManifest]: text(batchManifestJsonSchema()),
  };
}
