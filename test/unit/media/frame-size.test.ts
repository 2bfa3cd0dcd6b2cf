import { frameSize } from '../../../src/media/frame-size';
import { ASPECT_RATIOS, RESOLUTIONS } from '../../../src/contract';

describe('frameSize', () => {
  it.each([
    ['21:9', '480p', 1120, 480],
    ['16:9', '480p', 854, 480],
    ['4:3', '480p', 640, 480],
    ['1:1', '720p', 720, 720],
    ['3:4', '480p', 360, 480],
    ['9:16', '480p', 270, 480],
    ['9:16', '720p', 406, 720],
    ['16:9', '720p', 1280, 720],
  ] as const)('%s at %s is %ix%i', (ratio, resolution, width, height) => {
    expect(frameSize(ratio, resolution)).toMatchObject({ width, height });
  });

  it('gives even sizes and a sample aspect ratio that makes the display ratio exact, in lowest terms', () => {
    for (const ratio of ASPECT_RATIOS)
      for (const resolution of RESOLUTIONS) {
        const { width, height, sar } = frameSize(ratio, resolution);
        const [w, h] = ratio.split(':').map(Number) as [number, number];
        expect(width % 2).toBe(0);
        expect(width * sar[0] * h).toBe(height * sar[1] * w);
        const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
        expect(gcd(sar[0], sar[1])).toBe(1);
      }
  });

  it('keeps square pixels where the width needs no rounding', () => {
    expect(frameSize('4:3', '720p').sar).toEqual([1, 1]);
    expect(frameSize('16:9', '480p').sar).toEqual([1280, 1281]);
  });
});
