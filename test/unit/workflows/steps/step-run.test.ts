import { currentAttempt, idempotencyKeyFor, type StepRun } from '../../../../src/workflows/steps/step-run';

describe('idempotencyKeyFor', () => {
  it('names the step, the first run and the attempt', () => {
    expect(idempotencyKeyFor('demo/job/render', 'run-1', 2)).toBe('reelflow:demo/job/render:run-1:2');
  });

  it('is fresh per attempt and per run, the same for the same attempt (an activity retry)', () => {
    const key = idempotencyKeyFor('demo/job/render', 'run-1', 1);
    expect(idempotencyKeyFor('demo/job/render', 'run-1', 1)).toBe(key);
    expect(idempotencyKeyFor('demo/job/render', 'run-1', 2)).not.toBe(key);
    expect(idempotencyKeyFor('demo/job/render', 'run-2', 1)).not.toBe(key);
  });
});

describe('currentAttempt', () => {
  it('is the last attempt, or none before the first submit', () => {
    const run = { attempts: [] } as unknown as StepRun;
    expect(currentAttempt(run)).toBeUndefined();
    run.attempts.push({ attempt: 1 } as never, { attempt: 2 } as never);
    expect(currentAttempt(run)?.attempt).toBe(2);
  });
});
