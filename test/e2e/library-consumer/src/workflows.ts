import { ApplicationFailure } from '@temporalio/workflow';
import { generateVideo, upscale, type ServiceStepResult } from 'reelflow/workflows';

/** A team's own workflow: a clip from a still, then the clip upscaled, each one of reelflow's paid steps. */
export async function teaserWorkflow(still: string): Promise<{ clip: ServiceStepResult; big: ServiceStepResult }> {
  const clip = await generateVideo({ image_urls: [still], prompt: 'a slow pan over the harbour' });
  const video = clip.videos[0];
  if (!video) throw ApplicationFailure.nonRetryable(`clip ${clip.requestId} has no video`);
  const big = await upscale({ video_url: video.url });
  return { clip, big };
}
