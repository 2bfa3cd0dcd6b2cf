import {
  earlyCheckDelaySeconds,
  pollDelaySeconds,
  pollOffsetSeconds,
  pollsWithin,
  resolvePacing,
} from '../../../src/pipeline-spec';
import { MODELS } from '../../../src/contract';

describe('fallback poll pacing', () => {
  it('starts at the model expected run time and doubles to the cap', () => {
    const pacing = resolvePacing(MODELS['service-upscale-video-fast'].expectedRunSeconds);
    expect(pacing).toEqual({ firstPollSeconds: 60, factor: 2, capSeconds: 300, earlyCheckSeconds: 5 });
    expect([0, 1, 2, 3, 4, 5].map((k) => pollDelaySeconds(pacing, k))).toEqual([60, 120, 240, 300, 300, 300]);
    expect([0, 1, 2, 3].map((k) => pollOffsetSeconds(pacing, k))).toEqual([60, 180, 420, 720]);
  });

  it('counts polls within a span, a poll at the bound included', () => {
    const pacing = resolvePacing(10, { capSeconds: 40 });
    // polls at 10, 30, 70, 110, 150, ...
    expect(pollsWithin(pacing, 9)).toBe(0);
    expect(pollsWithin(pacing, 10)).toBe(1);
    expect(pollsWithin(pacing, 69)).toBe(2);
    expect(pollsWithin(pacing, 150)).toBe(5);
  });

  it('honours overrides', () => {
    expect(resolvePacing(180, { firstPollSeconds: 1, factor: 3, capSeconds: 5 })).toEqual({
      firstPollSeconds: 1,
      factor: 3,
      capSeconds: 5,
      earlyCheckSeconds: 5,
    });
    expect([0, 1, 2].map((k) => pollDelaySeconds({ firstPollSeconds: 1, factor: 3, capSeconds: 5 }, k))).toEqual([
      1, 3, 5,
    ]);
  });

  it('adds one early status check a few seconds after the submit, only when it comes before the first paced poll', () => {
    expect(earlyCheckDelaySeconds(resolvePacing(180))).toBe(5);
    expect(earlyCheckDelaySeconds(resolvePacing(180, { earlyCheckSeconds: 2 }))).toBe(2);
    expect(earlyCheckDelaySeconds(resolvePacing(180, { earlyCheckSeconds: 0 }))).toBeNull();
    expect(earlyCheckDelaySeconds(resolvePacing(180, { firstPollSeconds: 3 }))).toBeNull();
    expect(earlyCheckDelaySeconds({ firstPollSeconds: 60, factor: 2, capSeconds: 300 })).toBeNull();
  });
});
