import { MODEL_IDS, MODELS } from '../../../src/contract/model-metadata';

describe('MODELS', () => {
  it('describes every model id under its own id', () => {
    expect(Object.keys(MODELS).sort()).toEqual([...MODEL_IDS].sort());
    for (const id of MODEL_IDS) expect(MODELS[id].id).toBe(id);
  });

  it('names only image, audio and video URL fields (preflight and output feeding read them by kind)', () => {
    for (const id of MODEL_IDS) {
      for (const field of [...MODELS[id].uriFields, ...MODELS[id].uriListFields])
        expect(field).toMatch(/^(image|audio|video)_urls?$/);
    }
  });

  it('expects a positive run time of every model (poll pacing starts there)', () => {
    for (const id of MODEL_IDS) expect(MODELS[id].expectedRunSeconds).toBeGreaterThan(0);
  });
});
