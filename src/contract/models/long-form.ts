import type { z } from 'zod';
import { DEFAULTS, PROCESSING_SPEEDS, type ProcessingSpeed } from '../limits';
import type { LooseInput, ModelDefinition } from './definition';

/**
 * The long-form model: up to 30 s of video from up to 50 reference files, priced per request from the
 * spec's table. Its renderer in the local service: src/local-service/media/models/long-form.ts.
 */

export const ASPECT_RATIOS = ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

export const LONG_FORM_DURATIONS = ['4', '5', '10', '15', '20', '25', '30'] as const;
export type LongFormDuration = (typeof LONG_FORM_DURATIONS)[number];

export const RESOLUTIONS = ['480p', '720p'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

/** The spec's limits of a long-form input. */
export const LONG_FORM_LIMITS = {
  imageUrlsMax: 30,
  audioUrlsMax: 10,
  videoUrlsMax: 10,
  /** 30 + 10 + 10 reference files. */
  referenceFilesMax: 50,
  promptMaxLength: 30_000,
} as const;

/** Defaults the spec gives (and the ones it leaves open, decided in docs/spec-decisions.md). */
export const LONG_FORM_DEFAULTS = {
  aspectRatio: '16:9' as AspectRatio,
  duration: '4' as LongFormDuration,
  resolution: '480p' as Resolution,
  webSearch: false,
  /** Not shown in the spec; decided: off. */
  nsfwChecker: false,
  /** Not shown in the spec; decided: off. */
  sound: false,
} as const;

type PriceRow = Record<`${Resolution} ${ProcessingSpeed}`, number>;

/** Credits per request, all 28 cells of the spec's table. */
export const LONG_FORM_PRICES: Record<LongFormDuration, PriceRow> = {
  '4': { '480p standard': 80, '480p ultra-fast': 125, '720p standard': 170, '720p ultra-fast': 245 },
  '5': { '480p standard': 100, '480p ultra-fast': 155, '720p standard': 210, '720p ultra-fast': 305 },
  '10': { '480p standard': 195, '480p ultra-fast': 305, '720p standard': 420, '720p ultra-fast': 610 },
  '15': { '480p standard': 295, '480p ultra-fast': 460, '720p standard': 625, '720p ultra-fast': 915 },
  '20': { '480p standard': 390, '480p ultra-fast': 610, '720p standard': 835, '720p ultra-fast': 1220 },
  '25': { '480p standard': 485, '480p ultra-fast': 765, '720p standard': 1040, '720p ultra-fast': 1525 },
  '30': { '480p standard': 585, '480p ultra-fast': 915, '720p standard': 1250, '720p ultra-fast': 1830 },
};

/** The long-form model's definition (see ModelDefinition). */
export const LONG_FORM = {
  id: 'service-video-cinema-long-form-from-references',
  purpose: 'Up to 30 s of video from up to 50 reference files.',
  inputSchema: (zod, uri) =>
    zod.strictObject({
      image_urls: zod.array(uri).max(LONG_FORM_LIMITS.imageUrlsMax),
      prompt: zod.string().max(LONG_FORM_LIMITS.promptMaxLength).optional(),
      audio_urls: zod.array(uri).max(LONG_FORM_LIMITS.audioUrlsMax).optional(),
      video_urls: zod.array(uri).max(LONG_FORM_LIMITS.videoUrlsMax).optional(),
      aspect_ratio: zod.enum(ASPECT_RATIOS).optional(),
      duration: zod.enum(LONG_FORM_DURATIONS).optional(),
      resolution: zod.enum(RESOLUTIONS).optional(),
      processing_speed: zod.enum(PROCESSING_SPEEDS).optional(),
      nsfw_checker: zod.boolean().optional(),
      sound: zod.boolean().optional(),
      web_search: zod.boolean().optional(),
    }),
  limits: LONG_FORM_LIMITS,
  uriFields: [],
  uriListFields: ['image_urls', 'audio_urls', 'video_urls'],
  expectedRunSeconds: 180,
  outputSeconds: (input: LooseInput): number => Number(withLongFormDefaults(input as LongFormInput).duration),
  price: { kind: 'table', price: (input: LooseInput): number => priceLongForm(input as PriceFields) },
  preflight: {},
} as const satisfies ModelDefinition;

/** Input of the long-form model. */
export type LongFormInput = z.infer<ReturnType<typeof LONG_FORM.inputSchema>>;

/** Applies the spec's defaults to a long-form input (and the decided ones where it is silent). */
export function withLongFormDefaults(
  input: LongFormInput,
): Required<Omit<LongFormInput, 'prompt'>> & { prompt?: string } {
  return {
    ...input,
    audio_urls: input.audio_urls ?? [],
    video_urls: input.video_urls ?? [],
    aspect_ratio: input.aspect_ratio ?? LONG_FORM_DEFAULTS.aspectRatio,
    duration: input.duration ?? LONG_FORM_DEFAULTS.duration,
    resolution: input.resolution ?? LONG_FORM_DEFAULTS.resolution,
    processing_speed: input.processing_speed ?? DEFAULTS.processingSpeed,
    nsfw_checker: input.nsfw_checker ?? LONG_FORM_DEFAULTS.nsfwChecker,
    sound: input.sound ?? LONG_FORM_DEFAULTS.sound,
    web_search: input.web_search ?? LONG_FORM_DEFAULTS.webSearch,
  };
}

/** The fields a long-form price depends on. */
type PriceFields = Pick<LongFormInput, 'duration' | 'resolution' | 'processing_speed'>;

/** Price in credits of one long-form request, with the spec's defaults applied. */
export function priceLongForm(input: PriceFields): number {
  const full = withLongFormDefaults({ image_urls: [], ...input });
  return LONG_FORM_PRICES[full.duration][`${full.resolution} ${full.processing_speed}`];
}
