import { createModelInputSchemas, MODEL_INPUT_SCHEMAS } from '../../../src/contract/model-inputs';
import { withLongFormDefaults } from '../../../src/contract/models';

describe('withLongFormDefaults', () => {
  it('fills the spec’s defaults and the decided ones (nsfw checker and sound off)', () => {
    expect(withLongFormDefaults({ image_urls: ['https://m.test/a.png'] })).toEqual({
      image_urls: ['https://m.test/a.png'],
      audio_urls: [],
      video_urls: [],
      aspect_ratio: '16:9',
      duration: '4',
      resolution: '480p',
      processing_speed: 'standard',
      nsfw_checker: false,
      sound: false,
      web_search: false,
    });
  });

  it('keeps what the input sets', () => {
    const filled = withLongFormDefaults({ image_urls: [], duration: '30', sound: true, prompt: 'rain' });
    expect(filled).toMatchObject({ duration: '30', sound: true, prompt: 'rain' });
  });
});

describe('createModelInputSchemas', () => {
  it('widens every URI field by the rules it is given', () => {
    const local = createModelInputSchemas({ allowedOrigins: ['http://127.0.0.1:8787'] });
    const input = { video_url: 'http://127.0.0.1:8787/files/a.mp4' };
    expect(local['service-upscale-video-fast'].safeParse(input).success).toBe(true);
    expect(MODEL_INPUT_SCHEMAS['service-upscale-video-fast'].safeParse(input).success).toBe(false);
  });
});
