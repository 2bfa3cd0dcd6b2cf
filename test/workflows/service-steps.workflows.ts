import { generateVideo, upscale, type ServiceStepResult } from '../../src/workflows/public';

/**
 * A team's own workflows for test/workflows/service-steps.test.ts: they call reelflow's step
 * functions as a consumer does, through the package's workflow entry (src/workflows/public.ts).
 */

/** Two clips from one reference at once (one model twice), then the first one upscaled. */
export async function twoClipsThenUpscale(image: string): Promise<ServiceStepResult[]> {
  const [first, second] = await Promise.all([
    generateVideo({ image_urls: [image], prompt: 'first' }),
    generateVideo({ image_urls: [image], prompt: 'second' }),
  ]);
  const video = first.videos[0];
  if (!video) throw new Error('the first clip has no video');
  const big = await upscale({ video_url: video.url }, { label: 'upscale the first clip' });
  return [first, second, big];
}

/** One clip, nothing else: its job ends as the test's script says. */
export async function oneClip(image: string): Promise<ServiceStepResult> {
  return generateVideo({ image_urls: [image] });
}
