import { isTerminalState, JOB_STATES, LIMITS, TERMINAL_STATES } from '../../../src/contract/limits';

describe('isTerminalState', () => {
  it('is true for COMPLETED, FAILED and CANCELLED only', () => {
    expect(JOB_STATES.filter(isTerminalState)).toEqual(['COMPLETED', 'FAILED', 'CANCELLED']);
    expect(TERMINAL_STATES).toHaveLength(3);
  });
});

describe('LIMITS', () => {
  it('has one delay between each of the webhook attempts', () => {
    expect(LIMITS.webhookRetryDelaysSeconds).toHaveLength(LIMITS.webhookMaxAttempts - 1);
  });
});
