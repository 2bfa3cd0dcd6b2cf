import type { LongFormDuration, ProcessingSpeed, Resolution } from './limits';
import { withLongFormDefaults, type LongFormInput } from './models';

type PriceRow = Record<`${Resolution} ${ProcessingSpeed}`, number>;

/** Credits per request of the long-form model, all 28 cells of the spec's table. */
export const LONG_FORM_PRICES: Record<LongFormDuration, PriceRow> = {
  '4': { '480p standard': 80, '480p ultra-fast': 125, '720p standard': 170, '720p ultra-fast': 245 },
  '5': { '480p standard': 100, '480p ultra-fast': 155, '720p standard': 210, '720p ultra-fast': 305 },
  '10': { '480p standard': 195, '480p ultra-fast': 305, '720p standard': 420, '720p ultra-fast': 610 },
  '15': { '480p standard': 295, '480p ultra-fast': 460, '720p standard': 625, '720p ultra-fast': 915 },
  '20': { '480p standard': 390, '480p ultra-fast': 610, '720p standard': 835, '720p ultra-fast': 1220 },
  '25': { '480p standard': 485, '480p ultra-fast': 765, '720p standard': 1040, '720p ultra-fast': 1525 },
  '30': { '480p standard': 585, '480p ultra-fast': 915, '720p standard': 1250, '720p ultra-fast': 1830 },
};

/** Price in credits of one long-form request, with the spec's defaults applied. */
export function priceLongForm(input: Pick<LongFormInput, 'duration' | 'resolution' | 'processing_speed'>): number {
  const full = withLongFormDefaults({ image_urls: [], ...input });
  return LONG_FORM_PRICES[full.duration][`${full.resolution} ${full.processing_speed}`];
}

/**
 * Per-second rates of the local service (the spec leaves them to the quote endpoint; these are
 * the local implementation's own, recorded in docs/spec-decisions.md). Credits per output second.
 */
export const LOCAL_PER_SECOND_RATES = {
  'service-horizon-studio': { standard: 6, 'ultra-fast': 9 },
  'service-upscale-video-fast': { standard: 2, 'ultra-fast': 3 },
} as const satisfies Record<string, Record<ProcessingSpeed, number>>;

/** Credits for a per-second model: whole seconds, rounded up, at least one second. */
export function pricePerSecond(rate: number, clipSeconds: number): number {
  return rate * Math.max(1, Math.ceil(clipSeconds - 1e-6));
}

/**
 * The local service's credits for `seconds` of a per-second model's output at the input's
 * `processing_speed` (standard when absent); undefined for a model without a local per-second rate.
 */
export function localPerSecondPrice(
  model: string,
  input: { processing_speed?: unknown },
  seconds: number,
): number | undefined {
  const rates = (LOCAL_PER_SECOND_RATES as Record<string, Record<ProcessingSpeed, number>>)[model];
  if (!rates) return undefined;
  return pricePerSecond(rates[input.processing_speed === 'ultra-fast' ? 'ultra-fast' : 'standard'], seconds);
}
