/**
 * Model identifiers and metadata as plain data (no schemas), so workflows can import them without
 * pulling zod into the workflow bundle. Each model's own module is in ./models; its input schema is
 * built by ./model-inputs.
 */
import { MODEL_IDS, modelDefinition, pricingUnitOf, type ModelId, type PricingUnit } from './models';

export { MODEL_DEFINITIONS, MODEL_IDS, modelDefinition, type ModelId, type PricingUnit } from './models';

export interface ModelMetadata {
  id: ModelId;
  purpose: string;
  pricingUnit: PricingUnit;
  /** Input fields that name a URI (single) or URI list; used to feed outputs forward. */
  uriFields: readonly string[];
  uriListFields: readonly string[];
  /**
   * Rough expected run time in seconds for a typical job; pacing of fallback polls starts here.
   * Not in the spec: reelflow's own estimate.
   */
  expectedRunSeconds: number;
  /** For a model that resizes its input clip: how many times its width and height the output has. */
  frameScale?: number;
}

function metadataOf(model: ModelId): ModelMetadata {
  const definition = modelDefinition(model);
  return {
    id: model,
    purpose: definition.purpose,
    pricingUnit: pricingUnitOf(definition.price),
    uriFields: definition.uriFields,
    uriListFields: definition.uriListFields,
    expectedRunSeconds: definition.expectedRunSeconds,
    ...(definition.frameScale !== undefined ? { frameScale: definition.frameScale } : {}),
  };
}

/** Each model's metadata under its id. */
export const MODELS = Object.fromEntries(MODEL_IDS.map((id) => [id, metadataOf(id)])) as Record<ModelId, ModelMetadata>;
