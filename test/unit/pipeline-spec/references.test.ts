import {
  forEachReference,
  isReference,
  mapReferences,
  parseReferencePath,
  readPath,
  REFERENCE_PLACEHOLDER_URL,
  ReferenceResolutionError,
  resolveReferences,
} from '../../../src/pipeline-spec';

describe('references', () => {
  const output = {
    videos: [{ url: 'https://cdn.example.com/out.mp4' }, { url: 'https://cdn.example.com/b.mp4' }],
    request_id: 'r1',
  };

  it('parses and reads paths', () => {
    expect(parseReferencePath('videos[0].url')).toEqual(['videos', 0, 'url']);
    expect(parseReferencePath('request_id')).toEqual(['request_id']);
    for (const bad of ['', '.a', 'a.', 'a..b', 'a[b]', 'a b', 'a[*]', '[0][*]', 'a.[0]'])
      expect(parseReferencePath(bad)).toBeNull();
    expect(readPath(output, 'videos[1].url')).toBe('https://cdn.example.com/b.mp4');
    expect(readPath(output, 'videos[5].url')).toBeUndefined();
  });

  it("reads a fan-out step's list: [*] every item, [n] one of them", () => {
    expect(parseReferencePath('[*].videos[0].url')).toEqual(['*', 'videos', 0, 'url']);
    expect(parseReferencePath('[2].videos[0].url')).toEqual([2, 'videos', 0, 'url']);
    const items = [output, { videos: [{ url: 'https://cdn.example.com/c.mp4' }] }];
    expect(readPath(items, '[*].videos[0].url')).toEqual([
      'https://cdn.example.com/out.mp4',
      'https://cdn.example.com/c.mp4',
    ]);
    expect(readPath(items, '[1].videos[0].url')).toBe('https://cdn.example.com/c.mp4');
    expect(readPath(output, '[*].videos[0].url')).toBeUndefined();
    const input = {
      video_urls: { $from: 'scenes', path: '[*].videos[0].url' },
      video_url: { $from: 'scenes', path: '[1].videos[0].url' },
    };
    expect(resolveReferences(input, { scenes: items }, (url) => `copy:${url}`)).toEqual({
      video_urls: ['copy:https://cdn.example.com/out.mp4', 'copy:https://cdn.example.com/c.mp4'],
      video_url: 'copy:https://cdn.example.com/c.mp4',
    });
    expect(() => resolveReferences({ v: { $from: 'scenes', path: '[*].videos[1].url' } }, { scenes: items })).toThrow(
      'v: output of step "scenes" has no list of strings at [*].videos[1].url',
    );
  });

  it('resolves references anywhere in an input, default path videos[0].url', () => {
    const input = {
      video_url: { $from: 'a' },
      video_urls: ['https://x.example/1.mp4', { $from: 'a', path: 'videos[1].url' }],
      prompt: 'p',
    };
    expect(resolveReferences(input, { a: output })).toEqual({
      video_url: 'https://cdn.example.com/out.mp4',
      video_urls: ['https://x.example/1.mp4', 'https://cdn.example.com/b.mp4'],
      prompt: 'p',
    });
  });

  it('names the field when a reference cannot be resolved', () => {
    expect(() => resolveReferences({ video_url: { $from: 'a', path: 'videos[3].url' } }, { a: output })).toThrow(
      new ReferenceResolutionError('video_url: output of step "a" has no string at videos[3].url', 'video_url'),
    );
    expect(() => resolveReferences({ v: [{ $from: 'b' }] }, { a: output })).toThrow(/v\.0: step "b" has no output/);
  });

  it('uses a valid https placeholder for validation', () => {
    expect(REFERENCE_PLACEHOLDER_URL.startsWith('https://')).toBe(true);
  });

  it('tells a reference from other values', () => {
    expect(isReference({ $from: 'a' })).toBe(true);
    expect(isReference({ from: 'a' })).toBe(false);
    expect(isReference([{ $from: 'a' }])).toBe(false);
    expect(isReference('a')).toBe(false);
    expect(isReference(null)).toBe(false);
  });

  it('visits every reference with its location', () => {
    const seen: string[] = [];
    forEachReference({ video_url: { $from: 'a' }, image_urls: ['x', { $from: 'b' }], n: 3 }, (reference, at) =>
      seen.push(`${reference.$from}@${at.join('.')}`),
    );
    expect(seen).toEqual(['a@video_url', 'b@image_urls.1']);
  });

  it('maps references into a copy and leaves the input as it was', () => {
    const input = { video_url: { $from: 'a' }, keep: ['x'] };
    expect(mapReferences(input, (reference) => `<${reference.$from}>`)).toEqual({ video_url: '<a>', keep: ['x'] });
    expect(input.video_url).toEqual({ $from: 'a' });
  });

  it('passes each resolved value through the substitute (an archived copy)', () => {
    expect(resolveReferences({ video_url: { $from: 'a' } }, { a: output }, (url) => ({ archivedFrom: url }))).toEqual({
      video_url: { archivedFrom: 'https://cdn.example.com/out.mp4' },
    });
  });

  it('refuses an empty string at the path', () => {
    expect(() => resolveReferences({ v: { $from: 'a', path: 'request_id' } }, { a: { request_id: '' } })).toThrow(
      /v: output of step "a" has no string at request_id/,
    );
  });
});
