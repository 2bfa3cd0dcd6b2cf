import {
  LONG_FORM,
  LONG_FORM_LIMITS,
  MODEL_DEFINITIONS,
  MODEL_IDS,
  MODEL_INPUT_SCHEMAS,
  MODELS,
  localPerSecondPrice,
  LOCAL_PER_SECOND_RATES,
  modelDefinition,
  REVOICE,
  tablePrice,
  UPSCALE,
  validateModelInput,
} from '../../../../src/contract';

/** The top-level fields of a model's input schema. */
function schemaFields(id: (typeof MODEL_IDS)[number]): string[] {
  return Object.keys(MODEL_INPUT_SCHEMAS[id].shape);
}

describe('the model registry', () => {
  it('holds every model id under its own id, and nothing else', () => {
    expect(Object.keys(MODEL_DEFINITIONS).sort()).toEqual([...MODEL_IDS].sort());
    for (const id of MODEL_IDS) expect(modelDefinition(id).id).toBe(id);
    expect(new Set(MODEL_IDS).size).toBe(MODEL_IDS.length);
  });

  it.each(MODEL_IDS)('%s names URI fields its input schema has', (id) => {
    const model = modelDefinition(id);
    const fields = schemaFields(id);
    for (const field of [...model.uriFields, ...model.uriListFields]) expect(fields).toContain(field);
  });

  it.each(MODEL_IDS)('%s has a price rule the generic code can read', (id) => {
    const rule = modelDefinition(id).price;
    if (rule.kind === 'table') {
      expect(tablePrice(id, {})).toBeGreaterThan(0);
      expect(MODELS[id].pricingUnit).toBe('per-request');
    } else {
      // The billed clip is one of the model's single URI fields, and both speeds have a local rate.
      expect(modelDefinition(id).uriFields).toContain(rule.clipField);
      expect(rule.localRates.standard).toBeGreaterThan(0);
      expect(rule.localRates['ultra-fast']).toBeGreaterThan(rule.localRates.standard);
      expect(tablePrice(id, {})).toBeUndefined();
      expect(MODELS[id].pricingUnit).toBe('per-output-second');
    }
  });

  it.each(MODEL_IDS)('%s has a preflight rule on a field it has', (id) => {
    const clip = modelDefinition(id).preflight.clipLength;
    if (clip) {
      expect(modelDefinition(id).uriFields).toContain(clip.field);
      expect(clip.maxSeconds).toBeGreaterThan(0);
    }
  });
});

describe('the price rules’ figures', () => {
  it('prices the long-form model from its table, with the spec’s defaults (4 s, 480p, standard)', () => {
    expect(tablePrice(LONG_FORM.id, {})).toBe(80);
    expect(tablePrice(LONG_FORM.id, { duration: '10', resolution: '720p' })).toBe(420);
    expect(tablePrice(LONG_FORM.id, { duration: '30', resolution: '720p', processing_speed: 'ultra-fast' })).toBe(1830);
  });

  it('gives the local service’s per-second rates: re-voicing 6 / 9, upscaling 2 / 3 (docs/spec-decisions.md)', () => {
    expect(LOCAL_PER_SECOND_RATES).toEqual({
      [REVOICE.id]: { standard: 6, 'ultra-fast': 9 },
      [UPSCALE.id]: { standard: 2, 'ultra-fast': 3 },
    });
    expect(localPerSecondPrice(UPSCALE.id, { processing_speed: 'ultra-fast' }, 7.2)).toBe(24);
  });

  it('knows the long-form output’s length from its input alone, and no per-second output’s', () => {
    expect(LONG_FORM.outputSeconds({})).toBe(4);
    expect(LONG_FORM.outputSeconds({ duration: '15' })).toBe(15);
    expect(REVOICE.outputSeconds()).toBeNull();
    expect(UPSCALE.outputSeconds()).toBeNull();
  });
});

describe('the models’ own limits', () => {
  it('gives the long-form model 50 reference files: 30 images, 10 audio, 10 video', () => {
    expect(LONG_FORM_LIMITS.imageUrlsMax + LONG_FORM_LIMITS.audioUrlsMax + LONG_FORM_LIMITS.videoUrlsMax).toBe(
      LONG_FORM_LIMITS.referenceFilesMax,
    );
  });

  it('builds the long-form schema from them', () => {
    const images = (n: number) => Array.from({ length: n }, (_, i) => `https://m.test/${i}.png`);
    expect(validateModelInput(LONG_FORM.id, { image_urls: images(30) }).ok).toBe(true);
    expect(validateModelInput(LONG_FORM.id, { image_urls: images(31) }).ok).toBe(false);
  });

  it('refuses in preflight the re-voicing clips its limit refuses (10 minutes)', () => {
    expect(REVOICE.preflight.clipLength).toEqual({ field: 'video_url', maxSeconds: 600, doing: 're-voicing' });
    expect(REVOICE.price.maxClipSeconds).toBe(600);
  });

  it('says the upscaling model doubles the frame', () => {
    expect(MODELS[UPSCALE.id].frameScale).toBe(2);
    expect(MODELS[REVOICE.id].frameScale).toBeUndefined();
  });
});
