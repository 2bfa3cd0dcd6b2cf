import { z } from 'zod';
import { ASPECT_RATIOS, DEFAULTS, LIMITS, LONG_FORM_DURATIONS, PROCESSING_SPEEDS, RESOLUTIONS } from './limits';
import { makeUriSchema, type UriRules } from './uri';

export { MODEL_IDS, MODELS, type ModelId, type PricingUnit } from './model-metadata';
import { MODEL_IDS, type ModelId } from './model-metadata';

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

/** Applies the spec's defaults to a long-form input (and the decided ones where it is silent). */
export function withLongFormDefaults(
  input: LongFormInput,
): Required<Omit<LongFormInput, 'prompt'>> & { prompt?: string } {
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
