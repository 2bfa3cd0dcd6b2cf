import type { UpscaleVideoFastInput } from '../../../contract';
import { AAC, encodeTo, H264, probeInput, type ModelContext } from './common';

/**
 * Upscaling model (`service-upscale-video-fast`): doubles width and height with the lanczos
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
  return encodeTo(ctx, ['-i', clip, '-map', '0:v:0', ...audioArgs, '-vf', 'scale=iw*2:ih*2:flags=lanczos', ...H264]);
}
