import type { AspectRatio, Resolution } from '../contract';

/** Output frame of the long-form model: pixel size and the sample aspect ratio that makes the display ratio exact. */
export interface FrameSize {
  width: number;
  height: number;
  /** Sample aspect ratio `num/den` such that width*num / (height*den) equals the requested ratio exactly. */
  sar: [number, number];
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * Frame size of a long-form output: the resolution names the height (480p → 480 rows, 720p → 720),
 * the width follows the aspect ratio, rounded to the nearest even number (H.264 with 4:2:0 needs
 * even sizes). Where rounding changes the ratio (16:9 → 854x480, 9:16 720p → 406x720), a
 * sample aspect ratio slightly off 1:1 keeps the display aspect ratio exact.
 *
 * | ratio | 480p     | 720p     |
 * |-------|----------|----------|
 * | 21:9  | 1120x480 | 1680x720 |
 * | 16:9  | 854x480  | 1280x720 |
 * | 4:3   | 640x480  | 960x720  |
 * | 1:1   | 480x480  | 720x720  |
 * | 3:4   | 360x480  | 540x720  |
 * | 9:16  | 270x480  | 406x720  |
 */
export function frameSize(aspectRatio: AspectRatio, resolution: Resolution): FrameSize {
  const height = resolution === '720p' ? 720 : 480;
  const [w, h] = aspectRatio.split(':').map(Number) as [number, number];
  const width = 2 * Math.round((height * w) / h / 2);
  // SAR = (w/h) / (width/height) = w*height / (h*width), reduced.
  const num = w * height;
  const den = h * width;
  const g = gcd(num, den);
  return { width, height, sar: [num / g, den / g] };
}
