/**
 * Model identifiers and metadata as plain data (no schemas), so workflows can import them without
 * pulling zod into the workflow bundle. The input schemas live in ./models.
 */

export const MODEL_IDS = [
  'service-horizon-studio',
  'service-upscale-video-fast',
  'service-video-cinema-long-form-from-references',
] as const;
export type ModelId = (typeof MODEL_IDS)[number];

/** How a model is billed. */
export type PricingUnit = 'per-output-second' | 'per-request';

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
}

export const MODELS: Record<ModelId, ModelMetadata> = {
  'service-horizon-studio': {
    id: 'service-horizon-studio',
    purpose: 'Re-voice a video: the mouth is matched to a new audio track (clips up to 10 minutes).',
    pricingUnit: 'per-output-second',
    uriFields: ['audio_url', 'video_url'],
    uriListFields: [],
    expectedRunSeconds: 120,
  },
  'service-upscale-video-fast': {
    id: 'service-upscale-video-fast',
    purpose: 'Fast video super-resolution.',
    pricingUnit: 'per-output-second',
    uriFields: ['video_url'],
    uriListFields: [],
    expectedRunSeconds: 60,
  },
  'service-video-cinema-long-form-from-references': {
    id: 'service-video-cinema-long-form-from-references',
    purpose: 'Up to 30 s of video from up to 50 reference files.',
    pricingUnit: 'per-request',
    uriFields: [],
    uriListFields: ['image_urls', 'audio_urls', 'video_urls'],
    expectedRunSeconds: 180,
  },
};
