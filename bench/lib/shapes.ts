import { from, pipeline, type PipelineSpec } from '../../src/pipeline-spec';
import { PIXEL_PNG, silentWavDataUri } from '../../test/helpers/inputs';

/** Models the benches chain (the three of the canonical pipeline). */
export const LONG_FORM = 'service-video-cinema-long-form-from-references' as const;
export const REVOICE = 'service-horizon-studio' as const;
export const UPSCALE = 'service-upscale-video-fast' as const;

export { PIXEL_PNG };

/** What a driver runs: a chain of re-voicings, the canonical three steps, or one waiting step. */
export type Shape =
  { type: 'chain'; revoices: number; pollFirstSeconds?: number } | { type: 'three-step' } | { type: 'one-step' };

/** The long-form first step every shape starts with (4 s, 480p, 16:9, from a 1×1 PNG). */
export const longFormInput = () => ({
  image_urls: [PIXEL_PNG],
  duration: '4' as const,
  resolution: '480p' as const,
  aspect_ratio: '16:9' as const,
});

/**
 * The spec of one pipeline of `shape`, built with the public builder. With `pollFirstSeconds`, every
 * step's fallback polls start at that many seconds (×2, cap 4×): the jobs' real length, as the pacing
 * rule intends, instead of the model's default of a minute or more.
 */
export function specFor(shape: Shape, name: string, origin: string): PipelineSpec {
  const rules = { allowedOrigins: [origin] };
  if (shape.type === 'one-step') return pipeline(name).step('generate', LONG_FORM, longFormInput()).build(rules);
  const audio = silentWavDataUri();
  if (shape.type === 'three-step') {
    return pipeline(name)
      .step('generate', LONG_FORM, longFormInput())
      .step('revoice', REVOICE, { video_url: from('generate'), audio_url: audio })
      .step('upscale', UPSCALE, { video_url: from('revoice') })
      .build(rules);
  }
  const pacing = shape.pollFirstSeconds
    ? { pacing: { firstPollSeconds: shape.pollFirstSeconds, factor: 2, capSeconds: 4 * shape.pollFirstSeconds } }
    : {};
  let builder = pipeline(name).step('generate', LONG_FORM, longFormInput(), pacing);
  let previous = 'generate';
  for (let i = 1; i <= shape.revoices; i += 1) {
    builder = builder.step(`r${i}`, REVOICE, { video_url: from(previous), audio_url: audio }, pacing);
    previous = `r${i}`;
  }
  return builder.build(rules);
}
