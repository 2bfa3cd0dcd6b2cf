import { REVOICE, REVOICE_LIMITS, type RevoiceInput } from '../../../contract';
import { AAC, encodeTo, H264, limitedClipSeconds, probeInput, seconds, type ModelContext } from './common';
import type { ModelRenderer } from './renderer';

/**
 * Re-voicing model (`service-horizon-studio`): the clip's picture with its audio replaced by the
 * new track over exactly the clip's length (a shorter track is padded with silence, a longer one
 * trimmed). H.264 pictures are copied untouched, others re-encoded to H.264; audio is AAC.
 * The lip-sync of the real model is not imitated.
 */
export async function renderRevoice(input: RevoiceInput, ctx: ModelContext): Promise<string> {
  const clip = await ctx.fetchInput(input.video_url, 'video_url', 'clip');
  const clipProbe = await probeInput(clip, 'video_url', 'video', ctx.signal);
  const length = limitedClipSeconds(clipProbe, 'video_url', REVOICE_LIMITS.maxClipSeconds);
  const voice = await ctx.fetchInput(input.audio_url, 'audio_url', 'voice');
  await probeInput(voice, 'audio_url', 'audio', ctx.signal);
  const picture = clipProbe.streams.find((s) => s.codecType === 'video');
  const copy = picture?.codecName === 'h264';
  return encodeTo(ctx, [
    '-i',
    clip,
    '-i',
    voice,
    '-filter_complex',
    `[1:a:0]aresample=48000,apad,atrim=duration=${seconds(length)},asetpts=PTS-STARTPTS[aout]`,
    '-map',
    '0:v:0',
    '-map',
    '[aout]',
    ...(copy ? ['-c:v', 'copy'] : H264),
    ...AAC,
    '-t',
    seconds(length),
  ]);
}

/** The re-voicing model in the local service: its output keeps the clip's frame size and length. */
export const revoiceRenderer: ModelRenderer<typeof REVOICE.id> = {
  stem: 'revoiced',
  render: renderRevoice,
  stubShape: (input, sourceShape) => sourceShape(input.video_url),
};
