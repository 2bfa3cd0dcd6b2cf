import { z } from 'zod';
import {
  ASPECT_RATIOS,
  DEFAULTS,
  LIMITS,
  LONG_FORM_DURATIONS,
  PROCESSING_SPEEDS,
  RESOLUTIONS,
} from './limits';
import { makeUriSchema, type UriRules } from './uri';

export const MODEL_IDS = [
  'service-horizon-studio',
  'service-upscale-video-fast',
  'service-video-cinema-long-form-from-references',
] as const;
export type ModelId = (typeof MODEL_IDS)[number];
export const modelIdSchema = z.enum(MODEL_IDS);

const processingSpeed = z.enum(PROCESSING_SPEEDS);

/** Builds the three models' input schemas; `rules` widens what a URI field accepts. */
export function createModelInputSchemas(rules: UriRules = {}) {
  const uri = makeUriSchema(rules);
  return {
    /** Input of `service-horizon-studio`: re-voice a clip (up to 10 minutes) with a new audio track. */
    'service-horizon-studio': z.strictObject({
      audio_url: uri,
      video_url: uri,
      processing_speed: processingSpeed.optional(),
    }),
    /** Input of `service-upscale-video-fast`. */
    'service-upscale-video-fast': z.strictObject({
      video_url: uri,
      processing_speed: processingSpeed.optional(),
    }),
    /** Input of `service-video-cinema-long-form-from-references`. */
    'service-video-cinema-long-form-from-references': z.strictObject({
      image_urls: z.array(uri).max(LIMITS.imageUrlsMax),
      prompt: z.string().max(LIMITS.promptMaxLength).optional(),
      audio_urls: z.array(uri).max(LIMITS.audioUrlsMax).optional(),
      video_urls: z.array(uri).max(LIMITS.videoUrlsMax).optional(),
      aspect_ratio: z.enum(ASPECT_RATIOS).optional(),
      duration: z.enum(LONG_FORM_DURATIONS).optional(),
      resolution: z.enum(RESOLUTIONS).optional(),
      processing_speed: processingSpeed.optional(),
      nsfw_checker: z.boolean().optional(),
      sound: z.boolean().optional(),
      web_search: z.boolean().optional(),
    }),
  } as const;
}

/** The schemas with the spec's URI rule (public https or data URI). */
export const MODEL_INPUT_SCHEMAS = createModelInputSchemas();
export const horizonStudioInputSchema = MODEL_INPUT_SCHEMAS['service-horizon-studio'];
export const upscaleVideoFastInputSchema = MODEL_INPUT_SCHEMAS['service-upscale-video-fast'];
export const longFormInputSchema = MODEL_INPUT_SCHEMAS['service-video-cinema-long-form-from-references'];
export type HorizonStudioInput = z.infer<typeof horizonStudioInputSchema>;
export type UpscaleVideoFastInput = z.infer<typeof upscaleVideoFastInputSchema>;
export type LongFormInput = z.infer<typeof longFormInputSchema>;

export interface ModelInputs {
  'service-horizon-studio': HorizonStudioInput;
  'service-upscale-video-fast': UpscaleVideoFastInput;
  'service-video-cinema-long-form-from-references': LongFormInput;
}
export type ModelInput = ModelInputs[ModelId];

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

/** Applies the spec's defaults to a long-form input (and the decided ones where it is silent). */
export function withLongFormDefaults(input: LongFormInput): Required<Omit<LongFormInput, 'prompt'>> & { prompt?: string } {
  return {
    ...input,
    audio_urls: input.audio_urls ?? [],
    video_urls: input.video_urls ?? [],
    aspect_ratio: input.aspect_ratio ?? DEFAULTS.aspectRatio,
    duration: input.duration ?? DEFAULTS.duration,
    resolution: input.resolution ?? DEFAULTS.resolution,
    processing_speed: input.processing_speed ?? DEFAULTS.processingSpeed,
    nsfw_checker: input.nsfw_checker ?? DEFAULTS.nsfwChecker,
    sound: input.sound ?? DEFAULTS.sound,
    web_search: input.web_search ?? DEFAULTS.webSearch,
  };
}
