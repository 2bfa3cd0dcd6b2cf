import { archivedOrUrl, archiveModeOf, shouldArchive } from '../../../../src/workflows/pipeline/archive';
import type { PipelineSpec } from '../../../../src/pipeline-spec';
import type { PipelineSummary } from '../../../../src/workflows/pipeline-types';

const UPSCALE = 'service-upscale-video-fast';
const spec = (archive?: PipelineSpec['archive']): PipelineSpec => ({
  name: 'p',
  ...(archive ? { archive } : {}),
  steps: [
    { id: 'a', model: UPSCALE, input: { video_url: 'https://media.test/in.mp4' } },
    { id: 'b', model: UPSCALE, input: { video_url: { $from: 'a' } } },
    { id: 'c', model: UPSCALE, input: { video_url: 'https://media.test/other.mp4' } },
    { id: 'd', model: UPSCALE, input: { video_url: { $from: 'c', path: 'videos[0].url' } } },
  ],
});

describe('archiveModeOf', () => {
  it('is the spec’s mode, never when it names none', () => {
    expect(archiveModeOf({})).toBe('never');
    expect(archiveModeOf({ archive: 'always' })).toBe('always');
  });
});

describe('shouldArchive', () => {
  it('archives every step with always and none with never (or no mode)', () => {
    expect([0, 1, 2, 3].map((i) => shouldArchive(spec('always'), i))).toEqual([true, true, true, true]);
    expect([0, 1, 2, 3].map((i) => shouldArchive(spec('never'), i))).toEqual([false, false, false, false]);
    expect([0, 1, 2, 3].map((i) => shouldArchive(spec(), i))).toEqual([false, false, false, false]);
  });

  it('with on-expiry-risk, archives the outputs a later step reads and the last step’s', () => {
    // a is read by b, b by nobody, c by d (through a path), d is last.
    expect([0, 1, 2, 3].map((i) => shouldArchive(spec('on-expiry-risk'), i))).toEqual([true, false, true, true]);
  });
});

describe('archivedOrUrl', () => {
  const summary = {
    steps: [{ id: 'a', archived: [{ url: 'https://cdn.test/a.mp4', ref: 'media://sha256/aa' }] }, { id: 'b' }],
  } as unknown as PipelineSummary;

  it('gives the archived copy of a URL an earlier step archived', () => {
    expect(archivedOrUrl(summary, 'https://cdn.test/a.mp4')).toEqual({
      url: 'https://cdn.test/a.mp4',
      ref: 'media://sha256/aa',
    });
  });

  it('gives the URL itself when no step archived it', () => {
    expect(archivedOrUrl(summary, 'https://cdn.test/b.mp4')).toBe('https://cdn.test/b.mp4');
  });
});
