import type { WorkflowHandle } from '@temporalio/client';
import { LONG_FORM, REVOICE, UPSCALE, type UriRules } from '../contract';
import type { MediaRef } from '../media/reference';
import { parsePipelineSpec, type PipelineSpec } from '../pipeline-spec/spec';
import { decideApprovalUpdate, pipelineProgressQuery } from '../workflows/definitions';

/** The long ad's gate, which `reelflow demo --graph` waits at. */
export const DEMO_GATE = 'review';

/**
 * The long ad of examples/long-ad.json as the demo runs it: four scenes generated at once (5 s each, so
 * the demo takes a minute, not ten), cut into one clip, re-voiced, a person's approval, then upscaled.
 */
export function longAdPipeline(
  inputs: { imageUrls: MediaRef[]; audioUrl: MediaRef },
  name: string,
  uriRules: UriRules,
): PipelineSpec {
  const prompts = [
    'Opening: the bottle on a dark table, light sweeps across it.',
    'The character picks up the bottle and turns it in the light.',
    'Close-up of the label; water beads run down the glass.',
    'Closing: the character smiles, the logo fades in.',
  ];
  return parsePipelineSpec(
    {
      name,
      version: 2,
      steps: [
        {
          id: 'scenes',
          model: LONG_FORM.id,
          each: prompts.map((prompt) => ({ prompt })),
          input: { image_urls: inputs.imageUrls, prompt: { $item: 'prompt' }, duration: '5', resolution: '480p' },
        },
        { id: 'cut', op: 'concat', input: { videos: { $from: 'scenes', path: '[*].videos[0].url' } } },
        {
          id: 'revoice',
          model: REVOICE.id,
          input: { video_url: { $from: 'cut' }, audio_url: inputs.audioUrl },
        },
        { id: DEMO_GATE, op: 'approval', input: { preview: { $from: 'revoice' } } },
        {
          id: 'upscale',
          model: UPSCALE.id,
          after: [DEMO_GATE],
          input: { video_url: { $from: 'revoice' } },
        },
      ],
    },
    uriRules,
  );
}

/**
 * Watches the gate until the pipeline ends: once it waits, approves it (`--yes`) or says once how a
 * person decides it (`reelflow approve|reject`), and goes on following.
 */
export async function tendGate(
  handle: WorkflowHandle,
  ended: Promise<unknown>,
  approve: boolean,
  out: (line: string) => void,
  pollMs: number,
): Promise<void> {
  let over = false;
  void ended.finally(() => (over = true));
  while (!over) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const progress = await handle.query(pipelineProgressQuery).catch(() => null);
    const gate = progress?.steps.find((step) => step.id === DEMO_GATE);
    if (gate?.status !== 'running') continue;
    if (!approve) {
      const name = progress?.name ?? '';
      out(
        `${DEMO_GATE} waits for a person: \`reelflow approve ${name} ${DEMO_GATE}\` or \`reelflow reject ${name} ${DEMO_GATE} --reason <text>\``,
      );
      return;
    }
    await handle.executeUpdate(decideApprovalUpdate, {
      args: [{ step: DEMO_GATE, decision: 'approve', by: 'reelflow demo --yes' }],
    });
    out(`${DEMO_GATE}: approved (--yes)`);
    return;
  }
}
