import { idempotencyKeyFor, resubmitBackoffSeconds } from '../../../../../src/workflows/steps/job/service-job';

describe('resubmitBackoffSeconds', () => {
  it('doubles from 2 s for each resubmit', () => {
    expect([1, 2, 3, 4, 5].map(resubmitBackoffSeconds)).toEqual([2, 4, 8, 16, 32]);
  });

  it('is capped at one minute', () => {
    expect(resubmitBackoffSeconds(6)).toBe(60);
    expect(resubmitBackoffSeconds(20)).toBe(60);
  });
});

describe('idempotencyKeyFor', () => {
  it('names the job, the first run and the attempt', () => {
    expect(idempotencyKeyFor('demo/job/render', 'run-1', 2)).toBe('reelflow:demo/job/render:run-1:2');
  });

  it('is fresh per attempt and per run, the same for the same attempt (an activity retry)', () => {
    const key = idempotencyKeyFor('demo/job/render', 'run-1', 1);
    expect(idempotencyKeyFor('demo/job/render', 'run-1', 1)).toBe(key);
    expect(idempotencyKeyFor('demo/job/render', 'run-1', 2)).not.toBe(key);
    expect(idempotencyKeyFor('demo/job/render', 'run-2', 1)).not.toBe(key);
  });
});
