import { clipSeconds } from '../../media/ffmpeg';
import { OpInputInvalidError } from './errors';
import { hasAudio, requireVideo } from './inputs';
import { VIDEO_OUTPUT, secondsArg, type Operation } from './render';

/** Slack for a clip whose stated length rounds below a trim's `end` (one frame at 20 fps). */
const END_SLACK_SECONDS = 0.05;

/** Keeps `start`..`end` seconds of the video (re-encoded, so the cut is frame-accurate), its sound with it. */
export const trim: Operation<'trim'> = async (input, context) => {
  const clip = await context.input(input.video, 'video');
  requireVideo(clip, 'video');
  const length = clipSeconds(clip.probe);
  if (input.start >= length)
    throw new OpInputInvalidError(`is at or after the end of the video (${secondsArg(length)} s)`, 'start');
  if (input.end > length + END_SLACK_SECONDS)
    throw new OpInputInvalidError(`is after the end of the video (${secondsArg(length)} s)`, 'end');
  const end = Math.min(input.end, length);
  const audio = hasAudio(clip);
  return {
    kind: 'video',
    ext: 'mp4',
    contentType: 'video/mp4',
    expectSeconds: end - input.start,
    expectAudio: audio,
    args: (output) => [
      ...['-i', clip.file, '-ss', secondsArg(input.start), '-t', secondsArg(end - input.start)],
      ...['-map', '0:v:0', ...(audio ? ['-map', '0:a:0'] : [])],
      ...VIDEO_OUTPUT,
      output,
    ],
  };
};
