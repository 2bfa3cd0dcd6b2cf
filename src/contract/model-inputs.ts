import { z } from 'zod';
import { MODEL_DEFINITIONS, MODEL_IDS, type ModelId } from './models';
import { makeUriSchema, type UriRules } from './uri';

/**
 * The models' input schemas, each built by its model's module (./models) with zod and the URI rule
 * handed in here, so those modules stay free of zod (workflows import them).
 */

export const modelIdSchema = z.enum(MODEL_IDS);

/** Each model's input schema, by id. */
export type ModelInputSchemas = { [M in ModelId]: ReturnType<(typeof MODEL_DEFINITIONS)[M]['inputSchema']> };

/** Builds every model's input schema; `rules` widens what a URI field accepts. */
export function createModelInputSchemas(rules: UriRules = {}): ModelInputSchemas {
  const uri = makeUriSchema(rules);
  return Object.fromEntries(
    MODEL_IDS.map((id) => [id, MODEL_DEFINITIONS[id].inputSchema(z, uri)]),
  ) as ModelInputSchemas;
}

/** The schemas with the spec's URI rule (public https or data URI). */
export const MODEL_INPUT_SCHEMAS = createModelInputSchemas();

/** Each model's input, by id. */
export type ModelInputs = { [M in ModelId]: z.infer<ModelInputSchemas[M]> };
export type ModelInput = ModelInputs[ModelId];
