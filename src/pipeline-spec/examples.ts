import { LONG_FORM, REVOICE, UPSCALE, type UriRules } from '../contract';
import type { MediaRef } from '../media/reference';
import { from, pipeline } from './builder';
import type { PipelineSpec } from './spec';

/** Inputs of the canonical chain that come from outside: references and the new voice track. */
export interface ThreeStepInputs {
  /** https URLs, data URIs or media-store references. */
  imageUrls: (string | MediaRef)[];
  audioUrl: string | MediaRef;
  prompt?: string;
  duration?: '4' | '5' | '10' | '15' | '20' | '25' | '30';
}

/**
 * Inputs of examples/three-step.json: files shipped under examples/media/ (paths relative to the spec
 * file; the CLI turns them into what the service accepts). Built specs need URLs or data URIs instead.
 */
export const EXAMPLE_INPUTS: ThreeStepInputs = {
  imageUrls: ['media/hero.png', 'media/product.png'],
  audioUrl: 'media/voice-over.m4a',
  prompt: 'A product hero shot: the character lifts the bottle into the light and smiles.',
  duration: '5',
};

/**
 * The canonical three-step chain: long-form generation from references, re-voicing of that
 * video (re-voicing), then a fast upscale of the re-voiced video.
 */
export function threeStepPipeline(inputs: ThreeStepInputs, name = 'three-step', rules?: UriRules): PipelineSpec {
  return pipeline(name)
    .step('generate', LONG_FORM.id, {
      image_urls: inputs.imageUrls,
      ...(inputs.prompt !== undefined ? { prompt: inputs.prompt } : {}),
      duration: inputs.duration ?? '5',
      resolution: '480p',
      aspect_ratio: '16:9',
    })
    .step('revoice', REVOICE.id, { video_url: from('generate'), audio_url: inputs.audioUrl })
    .step('upscale', UPSCALE.id, { video_url: from('revoice', 'videos[0].url') })
    .build(rules);
}
