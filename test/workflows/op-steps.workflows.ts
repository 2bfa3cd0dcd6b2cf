import { concatVideos, muxAudio, takeFrame, trimVideo, type OpStepResult } from '../../src/workflows/public';

/**
 * Workflows of test/workflows/op-steps.test.ts: reelflow's own (the pipeline) and a team's that calls
 * the operation step functions through the package's workflow entry (src/workflows/public.ts).
 */
export { pipelineWorkflow } from '../../src/workflows/public';

/** A clip joined to itself, the middle second kept, its last frame taken and its sound mixed with the clip's. */
export async function cutTrimFrameMix(clip: string): Promise<OpStepResult[]> {
  const cut = await concatVideos([clip, clip]);
  const middle = await trimVideo({ video: cut.videos[0]!.url, start: 0.5, end: 1.5 });
  const [still, mixed] = await Promise.all([
    takeFrame({ video: middle.videos[0]!.url, at: 'last' }),
    muxAudio({ video: middle.videos[0]!.url, audio: clip, mode: 'mix' }, { key: 'mixed' }),
  ]);
  return [cut, middle, still, mixed];
}
