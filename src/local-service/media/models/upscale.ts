import { UPSCALE, type UpscaleVideoFastInput } from '../../../contract';
import { AAC, encodeTo, H264, probeInput, type ModelContext } from './common';
import type { ModelRenderer } from './renderer';

const SCALE = UPSCALE.frameScale;

/**
 * Upscaling model (`service-upscale-video-fast`): scales width and height by its `frameScale` (2) with the lanczos
 * scaler, keeps the duration and the audio (copied when it is AAC already).
 */
export async function renderUpscale(input: UpscaleVideoFastInput, ctx: ModelContext): Promise<string> {
  const clip = await ctx.fetchInput(input.video_url, 'video_url', 'clip');
  const probed = await probeInput(clip, 'video_url', 'video', ctx.signal);
  const audio = probed.streams.find((s) => s.codecType === 'audio');
  const audioArgs = !audio
    ? []
    : audio.codecName === 'aac'
      ? ['-map', '0:a:0', '-c:a', 'copy']
      : ['-map', '0:a:0', ...AAC];
  return encodeTo(ctx, [
    '-i',
    clip,
    '-map',
    '0:v:0',
    ...audioArgs,
    '-vf',
    `scale=iw*${SCALE}:ih*${SCALE}:flags=lanczos`,
    ...H264,
  ]);
}

/** The upscaling model in the local service: its output keeps the clip's length at a larger frame. */
export const upscaleRenderer: ModelRenderer<typeof UPSCALE.id> = {
  stem: 'upscaled',
  render: renderUpscale,
  stubShape: (input, sourceShape) => {
    const source = sourceShape(input.video_url);
    return source && { ...source, width: source.width * SCALE, height: source.height * SCALE };
  },
};
