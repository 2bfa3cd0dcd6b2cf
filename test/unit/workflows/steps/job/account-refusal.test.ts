import { ApplicationFailure } from '@temporalio/common';
import { accountRefusalOf } from '../../../../../src/workflows/steps/job/account-refusal';

/** A submit's failure as the activities map a problem document (src/activities/errors.ts). */
const problem = (code: string, status: number, message = `refused: ${code}`) =>
  ApplicationFailure.create({ type: `ServiceProblem:${code}`, message, details: [{ code, status }] });

describe('account-level refusals', () => {
  it('are no credits, a refused key and 429s past the submit attempts; the code and message are kept', () => {
    expect(accountRefusalOf(problem('insufficient_credits', 402, 'the balance is 0'))).toEqual({
      code: 'insufficient_credits',
      message: 'the balance is 0',
    });
    expect(accountRefusalOf(problem('unauthorized', 401))?.code).toBe('unauthorized');
    expect(accountRefusalOf(problem('forbidden', 403))?.code).toBe('forbidden');
    expect(accountRefusalOf(problem('rate_limited', 429))).toEqual({
      code: 'rate_limited',
      message: 'refused: rate_limited (429 after 10 submit attempts)',
    });
  });

  it('are not a refusal of the job itself, nor any other failure', () => {
    expect(accountRefusalOf(problem('validation_failed', 422))).toBeUndefined();
    expect(accountRefusalOf(problem('service_unavailable', 503))).toBeUndefined();
    expect(
      accountRefusalOf(ApplicationFailure.create({ type: 'AmbiguousSubmission', message: 'lost' })),
    ).toBeUndefined();
    expect(accountRefusalOf(new Error('insufficient_credits'))).toBeUndefined();
  });
});
