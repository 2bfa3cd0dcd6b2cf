import { quotePipeline } from '../../../../src/cli/lib/quote';
import type { ServiceClient } from '../../../../src/client/types';
import { parsePipelineSpec } from '../../../../src/pipeline-spec';

const LONG_FORM = 'service-video-cinema-long-form-from-references';
const UPSCALE = 'service-upscale-video-fast';

/** A service whose quote endpoint answers 10 credits a second of the asked duration, and records each input asked. */
function quotingService(asked: unknown[]): ServiceClient {
  return {
    quote: async (_model: string, input: { duration?: string }) => {
      asked.push(input);
      const seconds = Number(input.duration ?? 1);
      return { credits: 10 * seconds, billed_seconds: seconds };
    },
  } as unknown as ServiceClient;
}

describe('reelflow quote of a graph (version 2)', () => {
  it('prices every node in the order it runs and every fan-out item, items multiplied', async () => {
    const spec = parsePipelineSpec({
      version: 2,
      name: 'ad',
      steps: [
        { id: 'up', model: UPSCALE, input: { video_url: { $from: 'scenes', path: '[0].videos[0].url' } } },
        {
          id: 'scenes',
          model: LONG_FORM,
          input: { image_urls: ['https://example.com/a.png'], duration: { $item: 'seconds' } },
          each: [{ seconds: '5' }, { seconds: '10' }, { seconds: '5' }],
        },
      ],
    });
    const asked: unknown[] = [];
    const quote = await quotePipeline(spec, quotingService(asked), 'https://service.example');
    expect(quote.steps.map((s) => s.step)).toEqual(['up', 'scenes']);
    const scenes = quote.steps[1];
    expect(scenes).toMatchObject({ items: 3, basis: 'quote' });
    // 10 credits a second over 5 + 10 + 5 s.
    expect(scenes?.credits).toBe(200);
    expect(asked).toHaveLength(3);
    expect(quote.steps[0]).toMatchObject({ dependsOn: 'scenes', basis: 'unknown' });
  });
});
