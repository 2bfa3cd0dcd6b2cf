import { mergeActivities, prefixedActivities } from '../../../src/plugin/activity-types';
import { ReelflowPluginOptionsError } from '../../../src/plugin/errors';

describe('prefixedActivities', () => {
  it('registers each activity under its reelflow. type, the functions unchanged', () => {
    const quoteJob = async () => 1;
    expect(prefixedActivities({ quoteJob })).toEqual({ 'reelflow.quoteJob': quoteJob });
  });
});

describe('mergeActivities', () => {
  const reelflow = prefixedActivities({ quoteJob: async () => 1, cancelJob: async () => 2 });

  it("keeps the caller's activities next to reelflow's, even one with a reelflow activity's bare name", () => {
    const quoteJob = async () => 'mine';
    const merged = mergeActivities({ quoteJob }, reelflow);
    expect(merged.quoteJob).toBe(quoteJob);
    expect(Object.keys(merged).sort()).toEqual(['quoteJob', 'reelflow.cancelJob', 'reelflow.quoteJob']);
  });

  it("refuses a caller's activity under one of reelflow's types instead of replacing either, naming the option", () => {
    const merge = () => mergeActivities({ 'reelflow.quoteJob': async () => 0 }, reelflow, 'worker.activities');
    expect(merge).toThrow(ReelflowPluginOptionsError);
    expect(merge).toThrow(/^worker\.activities: "reelflow\.quoteJob" is reelflow's own activity type/);
  });

  it('takes no activities of the caller as none', () => {
    expect(mergeActivities(undefined, reelflow)).toEqual(reelflow);
  });
});
