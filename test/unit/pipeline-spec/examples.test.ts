import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFileStore } from '../../../src/media/store';
import type { MediaRef } from '../../../src/media/reference';
import { EXAMPLE_INPUTS, threeStepPipeline } from '../../../src/pipeline-spec';
import threeStepJson from '../../../examples/three-step.json';
import { loadSpecFile } from '../../../src/cli/lib/spec-files';

const LONG_FORM = 'service-video-cinema-long-form-from-references';

describe('the canonical three-step example', () => {
  it('keeps examples/three-step.json in step with the canonical example (its local files as the CLI loads them)', async () => {
    expect(threeStepJson.steps[0]?.input.image_urls).toEqual(EXAMPLE_INPUTS.imageUrls);
    expect(threeStepJson.steps[1]?.input.audio_url).toEqual(EXAMPLE_INPUTS.audioUrl);
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-example-store-'));
    const loaded = await loadSpecFile(path.join(__dirname, '../../../examples/three-step.json'), undefined, {
      store: createFileStore(storeDir),
    });
    fs.rmSync(storeDir, { recursive: true, force: true });
    const imageUrls = (loaded.steps[0]?.input as { image_urls: MediaRef[] }).image_urls;
    const audioUrl = (loaded.steps[1]?.input as { audio_url: MediaRef }).audio_url;
    expect(audioUrl).toMatchObject({ $media: expect.stringMatching(/^sha256:/) });
    // The CLI archives what a later step or the user still needs unless the spec says otherwise.
    expect(loaded).toEqual({
      ...threeStepPipeline({ ...EXAMPLE_INPUTS, imageUrls, audioUrl }),
      archive: 'on-expiry-risk',
    });
    expect(loaded.steps.map((s) => ('model' in s ? s.model : s.op))).toEqual([
      LONG_FORM,
      'service-horizon-studio',
      'service-upscale-video-fast',
    ]);
  });

  it('chains generate → revoice → upscale, each reading the previous step’s video', () => {
    const spec = threeStepPipeline({ imageUrls: ['https://m.test/a.png'], audioUrl: 'https://m.test/v.m4a' }, 'chain');
    expect(spec.name).toBe('chain');
    expect(spec.steps.map((s) => s.id)).toEqual(['generate', 'revoice', 'upscale']);
    expect(spec.steps[1]?.input).toEqual({ video_url: { $from: 'generate' }, audio_url: 'https://m.test/v.m4a' });
    expect(spec.steps[2]?.input).toEqual({ video_url: { $from: 'revoice', path: 'videos[0].url' } });
    expect(spec.steps[0]?.input).toMatchObject({ duration: '5', resolution: '480p', aspect_ratio: '16:9' });
    expect(spec.steps[0]?.input).not.toHaveProperty('prompt');
  });
});

describe('the graph examples', () => {
  const load = async (file: string) => {
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-example-store-'));
    try {
      return await loadSpecFile(path.join(__dirname, '../../../examples', file), undefined, {
        store: createFileStore(storeDir),
      });
    } finally {
      fs.rmSync(storeDir, { recursive: true, force: true });
    }
  };

  it('long-ad.json: four 30 s scenes at once, cut, re-voiced with a two-minute track, approved, then upscaled', async () => {
    const spec = await load('long-ad.json');
    expect(spec.version).toBe(2);
    expect(spec.steps.map((s) => s.id)).toEqual(['scenes', 'cut', 'revoice', 'review', 'upscale']);
    const [scenes, cut, , review, upscale] = spec.steps;
    expect(scenes?.each).toHaveLength(4);
    expect(scenes?.input).toMatchObject({ duration: '30', prompt: { $item: 'prompt' } });
    expect(cut).toMatchObject({ op: 'concat', input: { videos: { $from: 'scenes', path: '[*].videos[0].url' } } });
    expect(review).toMatchObject({ op: 'approval', timeoutHours: 72, onTimeout: 'reject' });
    expect(upscale?.after).toEqual(['review']);
  });

  it('variants.json: four variants that keep their successes, then a person looks at them all', async () => {
    const spec = await load('variants.json');
    const [variants, review] = spec.steps;
    expect(variants).toMatchObject({ onFailure: 'continue' });
    expect(variants?.each).toHaveLength(4);
    expect(review?.input).toEqual({ preview: { $from: 'variants', path: '[*].videos[0].url' } });
  });
});
