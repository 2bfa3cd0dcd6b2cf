import { LONG_FORM, REVOICE, UPSCALE, type ModelId } from '../../../contract';
import { MediaError } from '../errors';
import { longFormRenderer } from './long-form';
import type { ModelRenderer } from './renderer';
import { revoiceRenderer } from './revoice';
import { upscaleRenderer } from './upscale';

export type { ClipShape, ModelRenderer } from './renderer';

/**
 * Each model's renderer under its id: a model without one fails to compile
 * (docs/architecture.md, "Adding a model").
 */
export const MODEL_RENDERERS: { [M in ModelId]: ModelRenderer<M> } = {
  [REVOICE.id]: revoiceRenderer,
  [UPSCALE.id]: upscaleRenderer,
  [LONG_FORM.id]: longFormRenderer,
};

/** The renderer of `model`; a model id from outside that names none is a render failure. */
export function rendererOf(model: ModelId): ModelRenderer {
  if (!Object.hasOwn(MODEL_RENDERERS, model)) throw new MediaError('render_failed', `unknown model ${String(model)}`);
  return MODEL_RENDERERS[model] as ModelRenderer;
}
