import { resubmitBackoffSeconds } from '../../../../src/workflows/steps/run-step';

describe('resubmitBackoffSeconds', () => {
  it('doubles from 2 s for each resubmit', () => {
    expect([1, 2, 3, 4, 5].map(resubmitBackoffSeconds)).toEqual([2, 4, 8, 16, 32]);
  });

  it('is capped at one minute', () => {
    expect(resubmitBackoffSeconds(6)).toBe(60);
    expect(resubmitBackoffSeconds(20)).toBe(60);
  });
});
