import { from, pipeline, type PipelineSpec } from '../../src/pipeline';

/** Models the benches chain (the three of the canonical pipeline). */
export const LONG_FORM = 'service-video-cinema-long-form-from-references' as const;
export const REVOICE = 'service-horizon-studio' as const;
export const UPSCALE = 'service-upscale-video-fast' as const;

/** A 1×1 PNG: the smallest valid reference image. */
export const PIXEL_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A silent mono 16-bit WAV as a data URI (the re-voicing track). */
export function silentWav(seconds = 1, sampleRate = 8000): string {
  const samples = seconds * sampleRate;
  const buffer = Buffer.alloc(44 + samples * 2);
  buffer.write('RIFF', 0);
  buffer.writeUInt32LE(36 + samples * 2, 4);
  buffer.write('WAVE', 8);
  buffer.write('fmt ', 12);
  buffer.writeUInt32LE(16, 16);
  buffer.writeUInt16LE(1, 20);
  buffer.writeUInt16LE(1, 22);
  buffer.writeUInt32LE(sampleRate, 24);
  buffer.writeUInt32LE(sampleRate * 2, 28);
  buffer.writeUInt16LE(2, 32);
  buffer.writeUInt16LE(16, 34);
  buffer.write('data', 36);
  buffer.writeUInt32LE(samples * 2, 40);
  return `data:audio/wav;base64,${buffer.toString('base64')}`;
}

/** What a driver runs: a chain of re-voicings, the canonical three steps, or one waiting step. */
export type Shape =
  | { type: 'chain'; revoices: number; pollFirstSeconds?: number }
  | { type: 'three-step' }
  | { type: 'one-step' };

/** The long-form first step every shape starts with (4 s, 480p, 16:9, from a 1×1 PNG). */
const generateInput = () => ({ image_urls: [PIXEL_PNG], duration: '4' as const, resolution: '480p' as const, aspect_ratio: '16:9' as const });

/**
 * The spec of one pipeline of `shape`, built with the public builder. With `pollFirstSeconds`, every
 * step's fallback polls start at that many seconds (×2, cap 4×): the jobs' real length, as the pacing
 * rule intends, instead of the model's default of a minute or more.
 */
export function specFor(shape: Shape, name: string, origin: string): PipelineSpec {
  const rules = { allowedOrigins: [origin] };
  if (shape.type === 'one-step') return pipeline(name).step('generate', LONG_FORM, generateInput()).build(rules);
  const audio = silentWav();
  if (shape.type === 'three-step') {
    return pipeline(name)
      .step('generate', LONG_FORM, generateInput())
      .step('revoice', REVOICE, { video_url: from('generate'), audio_url: audio })
      .step('upscale', UPSCALE, { video_url: from('revoice') })
      .build(rules);
  }
  const pacing = shape.pollFirstSeconds ? { pacing: { firstPollSeconds: shape.pollFirstSeconds, factor: 2, capSeconds: 4 * shape.pollFirstSeconds } } : {};
  let builder = pipeline(name).step('generate', LONG_FORM, generateInput(), pacing);
  let previous = 'generate';
  for (let i = 1; i <= shape.revoices; i += 1) {
    builder = builder.step(`r${i}`, REVOICE, { video_url: from(previous), audio_url: audio }, pacing);
    previous = `r${i}`;
  }
  return builder.build(rules);
}
