import { LONG_FORM, MODEL_IDS, REVOICE, UPSCALE } from '../../../../../src/contract';
import { MediaError } from '../../../../../src/local-service/media/errors';
import { MODEL_RENDERERS, rendererOf, type ClipShape } from '../../../../../src/local-service/media/models';
import { outputFileName } from '../../../../../src/local-service/media/runner';

const SOURCE_URI = 'http://127.0.0.1:8787/files/req-1/long-form-req-1.mp4';
const SOURCE: ClipShape = { width: 854, height: 480, seconds: 5 };
const known = (uri: string): ClipShape | null => (uri === SOURCE_URI ? SOURCE : null);

describe('the renderer registry of the local service', () => {
  it('has a renderer for every model, each with its own output file stem', () => {
    expect(Object.keys(MODEL_RENDERERS).sort()).toEqual([...MODEL_IDS].sort());
    const stems = MODEL_IDS.map((id) => rendererOf(id).stem);
    expect(new Set(stems).size).toBe(MODEL_IDS.length);
    for (const id of MODEL_IDS) expect(outputFileName(id, 'req/1')).toBe(`${rendererOf(id).stem}-req_1.mp4`);
  });

  it('refuses a model id from outside that names no renderer, as a render failure', () => {
    expect(() => rendererOf('constructor' as never)).toThrow(MediaError);
  });
});

describe('stub output shapes', () => {
  it('long-form: the frame of its aspect ratio and resolution, for its duration', () => {
    expect(rendererOf(LONG_FORM.id).stubShape({ image_urls: [] }, known)).toEqual({
      width: 854,
      height: 480,
      seconds: 4,
    });
    expect(
      rendererOf(LONG_FORM.id).stubShape(
        { image_urls: [], aspect_ratio: '1:1', resolution: '720p', duration: '10' },
        known,
      ),
    ).toEqual({ width: 720, height: 720, seconds: 10 });
  });

  it('re-voicing: the source clip’s shape', () => {
    expect(rendererOf(REVOICE.id).stubShape({ video_url: SOURCE_URI, audio_url: 'data:,' }, known)).toEqual(SOURCE);
  });

  it('upscaling: the source clip at twice its width and height, same length', () => {
    expect(rendererOf(UPSCALE.id).stubShape({ video_url: SOURCE_URI }, known)).toEqual({
      width: 1708,
      height: 960,
      seconds: 5,
    });
  });

  it('none for a source the stub did not produce (the real runner renders it)', () => {
    expect(
      rendererOf(REVOICE.id).stubShape({ video_url: 'https://m.test/a.mp4', audio_url: 'data:,' }, known),
    ).toBeNull();
    expect(rendererOf(UPSCALE.id).stubShape({ video_url: 'https://m.test/a.mp4' }, known)).toBeNull();
  });
});
