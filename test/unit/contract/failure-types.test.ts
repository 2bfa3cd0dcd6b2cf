import { FAILURE_TYPES, serviceProblemType } from '../../../src/contract/failure-types';

describe('FAILURE_TYPES', () => {
  it('gives every failure a distinct type (workflows branch on the string)', () => {
    const values = Object.values(FAILURE_TYPES);
    expect(new Set(values).size).toBe(values.length);
  });

  it('keeps the values recorded in running histories', () => {
    expect(FAILURE_TYPES).toMatchObject({
      ambiguousSubmission: 'AmbiguousSubmission',
      budgetExceeded: 'BudgetExceeded',
      jobFailed: 'JobFailed',
      stepFailed: 'StepFailed',
      stepCancelled: 'StepCancelled',
      serviceProblem: 'ServiceProblem',
    });
  });
});

describe('serviceProblemType', () => {
  it('is ServiceProblem:<code>', () => {
    expect(serviceProblemType('insufficient_credits')).toBe('ServiceProblem:insufficient_credits');
  });
});
