import {
  digestOf,
  forEachMediaRef,
  isMediaRef,
  mapMediaRefs,
  mediaAddress,
  mediaRefProblem,
  type MediaRef,
} from '../../../src/media/reference';

const HEX = 'a'.repeat(64);
const ref: MediaRef = { $media: `sha256:${HEX}`, type: 'video/mp4', bytes: 1024 };

describe('media addresses', () => {
  it('round-trip a digest through sha256:<hex>', () => {
    expect(mediaAddress(HEX)).toBe(`sha256:${HEX}`);
    expect(digestOf(mediaAddress(HEX))).toBe(HEX);
  });

  it.each([`sha256:${'A'.repeat(64)}`, `sha256:${'a'.repeat(63)}`, `md5:${HEX}`, HEX])('%s is no address', (value) => {
    expect(digestOf(value)).toBeNull();
  });
});

describe('mediaRefProblem', () => {
  it('accepts a whole reference, with or without its url', () => {
    expect(mediaRefProblem(ref)).toBeNull();
    expect(mediaRefProblem({ ...ref, url: 'https://cdn.test/a.mp4' })).toBeNull();
  });

  it.each([
    [{ ...ref, extra: 1 }, 'unknown key "extra" in a media reference'],
    [{ ...ref, $media: 'sha256:xyz' }, '$media must be "sha256:" and 64 lowercase hex digits'],
    [{ ...ref, type: 'video' }, 'type must be a media type such as video/mp4'],
    [{ ...ref, bytes: -1 }, 'bytes must be a whole number'],
    [{ ...ref, bytes: 1.5 }, 'bytes must be a whole number'],
    [{ ...ref, url: 'ftp://x/a.mp4' }, 'url must be an http(s) URL'],
  ])('names what is wrong with %p', (value, problem) => {
    expect(mediaRefProblem(value as MediaRef)).toBe(problem);
  });
});

describe('walking media references', () => {
  const input = { video_url: ref, image_urls: ['https://m.test/a.png', ref], n: 2 };

  it('tells a reference from other values', () => {
    expect(isMediaRef(ref)).toBe(true);
    expect(isMediaRef([ref])).toBe(false);
    expect(isMediaRef({ media: 'x' })).toBe(false);
  });

  it('visits each reference with its location', () => {
    const seen: string[] = [];
    forEachMediaRef(input, (_, at) => seen.push(at.join('.')));
    expect(seen).toEqual(['video_url', 'image_urls.1']);
  });

  it('replaces each reference in a copy, awaiting the replacement', async () => {
    const mapped = await mapMediaRefs(input, async (_, at) => `resolved:${at.join('.')}`);
    expect(mapped).toEqual({
      video_url: 'resolved:video_url',
      image_urls: ['https://m.test/a.png', 'resolved:image_urls.1'],
      n: 2,
    });
    expect(input.video_url).toBe(ref);
  });
});
