import type { ModelDefinition } from './definition';
import { LONG_FORM } from './long-form';
import { REVOICE } from './revoice';
import { UPSCALE } from './upscale';

/**
 * The registry of models: one module per model in this folder (its id, input schema, limits,
 * metadata, price rule and preflight rule), listed here once. Plain data: workflows may import it
 * (through ../model-metadata). Adding a model: docs/architecture.md, "Adding a model".
 */

export * from './definition';
export * from './long-form';
export * from './revoice';
export * from './upscale';

/** Every model id, in the order lists and schemas show them. */
export const MODEL_IDS = [REVOICE.id, UPSCALE.id, LONG_FORM.id] as const;
export type ModelId = (typeof MODEL_IDS)[number];

/** Each model's definition under its id; a model missing here, or here but not in MODEL_IDS, fails to compile. */
export const MODEL_DEFINITIONS = {
  [REVOICE.id]: REVOICE,
  [UPSCALE.id]: UPSCALE,
  [LONG_FORM.id]: LONG_FORM,
} as const satisfies Record<ModelId, ModelDefinition>;

/** A model's definition through the common interface (for code that handles any model alike). */
export function modelDefinition(model: ModelId): ModelDefinition {
  return MODEL_DEFINITIONS[model];
}
