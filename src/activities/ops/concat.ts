import { clipSeconds } from '../../media/ffmpeg';
import { hasAudio, requireVideo, type LocalInput } from './inputs';
import { AUDIO_FORMAT, VIDEO_OUTPUT, secondsArg, type Operation } from './render';

/** Frame rate used when the first clip states none. */
const DEFAULT_FPS = 25;

/**
 * Joins clips in order. Each is conformed to the first one's size (scaled to fit, padded, even
 * dimensions) and frame rate; a clip without sound gets silence, so the result has an audio track
 * exactly when some clip has one, and every clip keeps its own length.
 */
export const concat: Operation<'concat'> = async (input, context) => {
  const clips = await Promise.all(input.videos.map((video, i) => context.input(video, `videos.${i}`)));
  clips.forEach((clip, i) => requireVideo(clip, `videos.${i}`));
  const first = clips[0] as LocalInput;
  const width = even(first.probe.width ?? 2);
  const height = even(first.probe.height ?? 2);
  const rate = first.probe.streams.find((s) => s.codecType === 'video')?.frameRate;
  const fps = rate && rate > 0 && rate <= 120 ? Math.round(rate * 1000) / 1000 : DEFAULT_FPS;
  const audio = clips.some(hasAudio);
  const lengths = clips.map((clip) => clipSeconds(clip.probe));
  const filters = clips.flatMap((clip, i) => {
    const length = secondsArg(lengths[i] ?? 0);
    const video =
      `[${i}:v]scale=${width}:${height}:force_original_aspect_ratio=decrease,` +
      `pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=${fps},format=yuv420p,` +
      `trim=duration=${length},setpts=PTS-STARTPTS[v${i}]`;
    if (!audio) return [video];
    // Every segment's sound lasts as long as its picture: padded or cut, silence where there is none.
    const sound = hasAudio(clip) ? `[${i}:a]${AUDIO_FORMAT},apad` : `anullsrc=r=48000:cl=stereo,${AUDIO_FORMAT}`;
    return [video, `${sound},atrim=end=${length},asetpts=PTS-STARTPTS[a${i}]`];
  });
  const segments = clips.map((_, i) => (audio ? `[v${i}][a${i}]` : `[v${i}]`)).join('');
  filters.push(`${segments}concat=n=${clips.length}:v=1:a=${audio ? 1 : 0}${audio ? '[v][a]' : '[v]'}`);
  return {
    kind: 'video',
    ext: 'mp4',
    contentType: 'video/mp4',
    expectSeconds: lengths.reduce((sum, s) => sum + s, 0),
    expectAudio: audio,
    args: (output) => [
      ...clips.flatMap((clip) => ['-i', clip.file]),
      ...['-filter_complex', filters.join(';'), '-map', '[v]', ...(audio ? ['-map', '[a]'] : [])],
      ...VIDEO_OUTPUT,
      output,
    ],
  };
};

/** H.264 in 4:2:0 needs even dimensions. */
function even(n: number): number {
  return Math.max(2, n - (n % 2));
}
