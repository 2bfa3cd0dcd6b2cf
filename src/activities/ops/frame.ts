import { clipSeconds } from '../../media/ffmpeg';
import { OpInputInvalidError } from './errors';
import { requireVideo } from './inputs';
import { secondsArg, type Operation } from './render';

/** How far before the end the last frame is looked for: every frame of that stretch is decoded, the last kept. */
const LAST_WINDOW_SECONDS = 1;

const IMAGE_OUTPUT = {
  png: ['-c:v', 'png', '-pix_fmt', 'rgb24'],
  jpeg: ['-c:v', 'mjpeg', '-q:v', '2', '-pix_fmt', 'yuvj420p'],
} as const;

/** One frame of the video as an image: at `at` seconds, or its last frame (e.g. the next scene's first image). */
export const frame: Operation<'frame'> = async (input, context) => {
  const clip = await context.input(input.video, 'video');
  requireVideo(clip, 'video');
  const length = clipSeconds(clip.probe);
  if (input.at !== 'last' && input.at >= length)
    throw new OpInputInvalidError(
      `is at or after the end of the video (${secondsArg(length)} s); "last" takes its last frame`,
      'at',
    );
  const format = input.format ?? 'png';
  // From the end: decode the last stretch and let the image muxer keep overwriting one file.
  const seek =
    input.at === 'last'
      ? ['-sseof', `-${LAST_WINDOW_SECONDS}`, '-i', clip.file, '-update', '1']
      : ['-ss', secondsArg(input.at), '-i', clip.file, '-frames:v', '1'];
  return {
    kind: 'image',
    ext: format === 'png' ? 'png' : 'jpg',
    contentType: format === 'png' ? 'image/png' : 'image/jpeg',
    args: (output) => [
      ...seek,
      ...['-map', '0:v:0', ...IMAGE_OUTPUT[format], '-map_metadata', '-1'],
      ...['-fflags', '+bitexact', '-flags:v', '+bitexact', '-f', 'image2', output],
    ],
  };
};
