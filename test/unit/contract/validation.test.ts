import {
  describeFieldErrors,
  uriProblem,
  validateModelId,
  validateModelInput,
  type FieldError,
  type ModelId,
} from '../../../src/contract';

/**
 * Every input limit of the three models, checked at the bound and one past it. Bounds and allowed
 * values are literal copies of the spec (not imported from src/contract/limits), so a typo in the
 * contract fails here.
 */

const HORIZON = 'service-horizon-studio';
const UPSCALE = 'service-upscale-video-fast';
const LONG_FORM = 'service-video-cinema-long-form-from-references';

const URL_A = 'https://cdn.example.com/inputs/a.png';
const DATA_URI =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const urls = (n: number): string[] => Array.from({ length: n }, (_, i) => `https://cdn.example.com/ref/${i}.png`);

/** Validates and returns the error list (empty when accepted); validation must never throw. */
function errorsOf(model: ModelId, input: unknown, allowedOrigins?: string[]): FieldError[] {
  const result = validateModelInput(model, input, allowedOrigins ? { allowedOrigins } : undefined);
  return result.ok ? [] : result.errors;
}

const paths = (errors: FieldError[]): string[] => errors.map((e) => e.path);

/** Minimal valid input of each model; tests vary one field at a time. */
const BASE: Record<ModelId, Record<string, unknown>> = {
  [HORIZON]: { audio_url: URL_A, video_url: URL_A },
  [UPSCALE]: { video_url: URL_A },
  [LONG_FORM]: { image_urls: [URL_A] },
};

describe('long-form model: list and prompt limits', () => {
  it.each([
    ['image_urls', 30],
    ['audio_urls', 10],
    ['video_urls', 10],
  ])('%s accepts %i items and refuses one more', (field, max) => {
    expect(errorsOf(LONG_FORM, { ...BASE[LONG_FORM], [field]: urls(max) })).toEqual([]);
    expect(paths(errorsOf(LONG_FORM, { ...BASE[LONG_FORM], [field]: urls(max + 1) }))).toEqual([field]);
  });

  it('accepts 50 reference files in total (30 + 10 + 10)', () => {
    expect(errorsOf(LONG_FORM, { image_urls: urls(30), audio_urls: urls(10), video_urls: urls(10) })).toEqual([]);
  });

  it('accepts an empty image_urls list (the spec gives a maximum only)', () => {
    expect(errorsOf(LONG_FORM, { image_urls: [] })).toEqual([]);
  });

  it('accepts a prompt of 30000 characters and refuses 30001', () => {
    expect(errorsOf(LONG_FORM, { ...BASE[LONG_FORM], prompt: 'x'.repeat(30_000) })).toEqual([]);
    expect(paths(errorsOf(LONG_FORM, { ...BASE[LONG_FORM], prompt: 'x'.repeat(30_001) }))).toEqual(['prompt']);
  });

  it('refuses a prompt that is not a string', () => {
    expect(paths(errorsOf(LONG_FORM, { ...BASE[LONG_FORM], prompt: 42 }))).toEqual(['prompt']);
  });

  it('names the index of a bad list element (image_urls.3)', () => {
    const image_urls = [URL_A, URL_A, URL_A, 'http://cdn.example.com/plain.png'];
    const errors = errorsOf(LONG_FORM, { image_urls });
    expect(paths(errors)).toEqual(['image_urls.3']);
    expect(errors[0]?.message).toMatch(/https/);
  });

  it('names every bad element of every list', () => {
    const errors = errorsOf(LONG_FORM, {
      image_urls: [URL_A, 7],
      audio_urls: ['ftp://example.com/a.mp3'],
      video_urls: [URL_A, URL_A, 'not a uri'],
    });
    expect(paths(errors).sort()).toEqual(['audio_urls.0', 'image_urls.1', 'video_urls.2']);
  });
});

describe('long-form model: allowed values', () => {
  const enums: Array<[string, string[], unknown[]]> = [
    ['duration', ['4', '5', '10', '15', '20', '25', '30'], ['6', '3', '35', '0', '', ' 4', 4, '4s']],
    ['resolution', ['480p', '720p'], ['1080p', '360p', '720', '720P']],
    ['aspect_ratio', ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'], ['2:1', '16:10', '9:21', '16/9', '']],
    ['processing_speed', ['standard', 'ultra-fast'], ['fast', 'ultra_fast', 'Standard', 'ultrafast']],
  ];

  describe.each(enums)('%s', (field, allowed, refused) => {
    it.each(allowed)('accepts %p', (value) => {
      expect(errorsOf(LONG_FORM, { ...BASE[LONG_FORM], [field]: value })).toEqual([]);
    });
    it.each(refused)('refuses %p', (value) => {
      expect(paths(errorsOf(LONG_FORM, { ...BASE[LONG_FORM], [field]: value }))).toEqual([field]);
    });
  });

  describe.each(['nsfw_checker', 'sound', 'web_search'])('boolean %s', (field) => {
    it.each([true, false])('accepts %p', (value) => {
      expect(errorsOf(LONG_FORM, { ...BASE[LONG_FORM], [field]: value })).toEqual([]);
    });
    it.each(['true', 'false', 1, 0, null])('refuses %p', (value) => {
      expect(paths(errorsOf(LONG_FORM, { ...BASE[LONG_FORM], [field]: value }))).toEqual([field]);
    });
  });

  it('accepts a request that sets every field', () => {
    const input = {
      image_urls: [URL_A, DATA_URI],
      prompt: 'a red bicycle on a beach',
      audio_urls: [URL_A],
      video_urls: [URL_A],
      aspect_ratio: '9:16',
      duration: '30',
      resolution: '720p',
      processing_speed: 'ultra-fast',
      nsfw_checker: true,
      sound: true,
      web_search: false,
    };
    const result = validateModelInput(LONG_FORM, input);
    expect(result).toEqual({ ok: true, value: input });
  });
});

describe('per-second models', () => {
  describe.each([HORIZON, UPSCALE] as const)('%s', (model) => {
    it.each(['standard', 'ultra-fast'])('accepts processing_speed %p', (value) => {
      expect(errorsOf(model, { ...BASE[model], processing_speed: value })).toEqual([]);
    });
    it.each(['fast', 'ultra_fast', 'Standard', ''])('refuses processing_speed %p', (value) => {
      expect(paths(errorsOf(model, { ...BASE[model], processing_speed: value }))).toEqual(['processing_speed']);
    });
    it('refuses fields of another model, naming them', () => {
      expect(paths(errorsOf(model, { ...BASE[model], duration: '4' }))).toEqual(['duration']);
    });
  });

  it('horizon-studio names both missing required fields', () => {
    expect(paths(errorsOf(HORIZON, {})).sort()).toEqual(['audio_url', 'video_url']);
    expect(paths(errorsOf(HORIZON, { video_url: URL_A }))).toEqual(['audio_url']);
  });

  it('upscale-video-fast names its missing required field', () => {
    expect(paths(errorsOf(UPSCALE, { processing_speed: 'standard' }))).toEqual(['video_url']);
  });

  it('horizon-studio refuses an http audio_url at its path', () => {
    expect(paths(errorsOf(HORIZON, { audio_url: 'http://example.com/a.wav', video_url: URL_A }))).toEqual([
      'audio_url',
    ]);
  });
});

describe('required and unknown fields', () => {
  it('long-form names the missing image_urls', () => {
    expect(paths(errorsOf(LONG_FORM, { prompt: 'x' }))).toEqual(['image_urls']);
  });

  it.each([HORIZON, UPSCALE, LONG_FORM] as const)('%s refuses an unknown field at its own path', (model) => {
    const errors = errorsOf(model, { ...BASE[model], colour: 'red', seed: 4 });
    expect(paths(errors).sort()).toEqual(['colour', 'seed']);
    expect(errors.every((e) => e.message.length > 0)).toBe(true);
  });

  it('reports missing, unknown and invalid fields together', () => {
    expect(paths(errorsOf(LONG_FORM, { extra: 1, duration: '6' })).sort()).toEqual(['duration', 'extra', 'image_urls']);
  });
});

describe('URI rule: public https URL or base64 data URI', () => {
  it.each([
    ['https URL', 'https://cdn.example.com/a.png'],
    ['https URL with port, query and fragment', 'https://cdn.example.com:8443/a.png?sig=abc&exp=1#t'],
    ['signed URL', 'https://bucket.example.com/o/a.mp4?X-Signature=0a1b2c'],
    ['base64 data URI', DATA_URI],
    ['data URI with a parameter', 'data:audio/wav;name=a.wav;base64,UklGRg=='],
  ])('accepts a %s', (_kind, uri) => {
    expect(errorsOf(UPSCALE, { video_url: uri })).toEqual([]);
  });

  it.each([
    ['http URL', 'http://cdn.example.com/a.png'],
    ['URL with credentials', 'https://user:secret@cdn.example.com/a.png'],
    ['URL with a user name only', 'https://user@cdn.example.com/a.png'],
    ['ftp URL', 'ftp://cdn.example.com/a.png'],
    ['file URL', 'file:///etc/passwd'],
    ['relative path', '/inputs/a.png'],
    ['plain text', 'a.png'],
    ['empty string', ''],
    ['data URI without base64', 'data:image/png,hello'],
    ['data URI without media type', 'data:;base64,aGVsbG8='],
    ['data URI with non-base64 payload', 'data:image/png;base64,@@@@'],
    ['data URI with a comma missing', 'data:image/png;base64'],
    ['number', 42],
  ])('refuses a %s', (_kind, uri) => {
    const errors = errorsOf(UPSCALE, { video_url: uri });
    expect(paths(errors)).toEqual(['video_url']);
  });

  it('says why a URL with credentials is refused', () => {
    expect(errorsOf(UPSCALE, { video_url: 'https://user:secret@cdn.example.com/a.png' })[0]?.message).toMatch(
      /credential/,
    );
  });
});

describe('allowedOrigins: a service accepts its own http output URLs', () => {
  const own = 'http://127.0.0.1:8787';

  it('accepts an http URL of the allowed origin', () => {
    expect(errorsOf(UPSCALE, { video_url: `${own}/files/out.mp4` }, [own])).toEqual([]);
    expect(errorsOf(LONG_FORM, { image_urls: [`${own}/files/1.png`, URL_A] }, [`${own}/`])).toEqual([]);
  });

  it('still refuses that URL without the option', () => {
    expect(paths(errorsOf(UPSCALE, { video_url: `${own}/files/out.mp4` }))).toEqual(['video_url']);
  });

  it.each([
    ['another port', 'http://127.0.0.1:8788/files/out.mp4'],
    ['another host', 'http://127.0.0.2:8787/files/out.mp4'],
    ['a longer port', 'http://127.0.0.1:87870/files/out.mp4'],
    ['a host that only starts with it', 'http://127.0.0.1:8787.evil.example/files/out.mp4'],
    ['credentials that spell it', 'http://127.0.0.1:8787@evil.example/files/out.mp4'],
    ['localhost instead of the address', 'http://localhost:8787/files/out.mp4'],
  ])('refuses an http URL on %s', (_kind, uri) => {
    expect(paths(errorsOf(UPSCALE, { video_url: uri }, [own]))).toEqual(['video_url']);
  });

  it('keeps accepting https URLs and data URIs', () => {
    expect(errorsOf(HORIZON, { audio_url: DATA_URI, video_url: URL_A }, [own])).toEqual([]);
  });
});

describe('validation never throws', () => {
  it.each([null, undefined, 'a string', 42, [], [URL_A], true])('answers %p with a root error', (input) => {
    for (const model of [HORIZON, UPSCALE, LONG_FORM] as const) {
      const result = validateModelInput(model, input);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(paths(result.errors)).toEqual(['(root)']);
    }
  });

  it.each(['nope', 'constructor', '__proto__'])('answers an unknown model %p with a field error', (model) => {
    const result = validateModelInput(model as ModelId, {});
    expect(result).toEqual({ ok: false, errors: [{ path: 'model', message: expect.any(String) }] });
  });

  it('validates model identifiers from outside', () => {
    expect(validateModelId(LONG_FORM)).toEqual({ ok: true, value: LONG_FORM });
    expect(validateModelId('service-unknown').ok).toBe(false);
  });

  it('renders errors as one "path: reason" line each', () => {
    const errors = errorsOf(LONG_FORM, { image_urls: urls(31), duration: '6' });
    const lines = describeFieldErrors(errors).split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^image_urls: /);
    expect(lines[1]).toMatch(/^duration: /);
  });
});

describe('plain http inputs of a local service (allowPlainHttp)', () => {
  it('accepts http only for local hosts, and only when asked', () => {
    const signed = 'http://127.0.0.1:9000/bucket/objects/abc?X-Amz-Signature=00';
    expect(uriProblem(signed)).toMatch(/must use https/);
    expect(uriProblem(signed, { allowPlainHttp: true })).toBeNull();
    expect(uriProblem('http://localhost:9000/a.png', { allowPlainHttp: true })).toBeNull();
    expect(uriProblem('http://192.168.1.20/a.png', { allowPlainHttp: true })).toBeNull();
    expect(uriProblem('http://example.com/a.png', { allowPlainHttp: true })).toMatch(/must use https/);
    expect(uriProblem('http://8.8.8.8/a.png', { allowPlainHttp: true })).toMatch(/must use https/);
  });
});
