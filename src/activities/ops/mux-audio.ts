import { clipSeconds } from '../../media/ffmpeg';
import { hasAudio, requireAudio, requireVideo } from './inputs';
import { AUDIO_FORMAT, VIDEO_OUTPUT, secondsArg, type Operation } from './render';

/**
 * The video with a new sound: `replace` (the default) drops its own, `mix` mixes the new one into it
 * (amix; a video without sound just takes the new one). The result is as long as the video: a
 * shorter audio track is padded with silence, a longer one cut.
 */
export const muxAudio: Operation<'mux_audio'> = async (input, context) => {
  const [video, audio] = await Promise.all([context.input(input.video, 'video'), context.input(input.audio, 'audio')]);
  requireVideo(video, 'video');
  requireAudio(audio, 'audio');
  const length = secondsArg(clipSeconds(video.probe));
  const mix = input.mode === 'mix' && hasAudio(video);
  const sound = mix
    ? `[0:a]${AUDIO_FORMAT},apad[own];[1:a]${AUDIO_FORMAT},apad[new];` +
      `[own][new]amix=inputs=2:duration=longest:dropout_transition=0,atrim=end=${length}[a]`
    : `[1:a]${AUDIO_FORMAT},apad,atrim=end=${length}[a]`;
  return {
    kind: 'video',
    ext: 'mp4',
    contentType: 'video/mp4',
    expectSeconds: clipSeconds(video.probe),
    expectAudio: true,
    args: (output) => [
      ...['-i', video.file, '-i', audio.file, '-filter_complex', sound],
      ...['-map', '0:v:0', '-map', '[a]', ...VIDEO_OUTPUT, '-t', length],
      output,
    ],
  };
};
