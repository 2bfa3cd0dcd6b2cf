import {
  AmbiguousSubmissionError,
  isMissingRoute,
  ServiceProblemError,
  ServiceTimeoutError,
  ServiceUnreachableError,
  SubmitAnswerInvalidError,
  UnexpectedResponseError,
} from '../../../src/client/errors';

describe('ServiceProblemError', () => {
  it.each([
    [408, true],
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [402, false],
    [404, false],
    [422, false],
  ])('status %i is retryable: %p', (status, retryable) => {
    expect(new ServiceProblemError(status, `http_${status}`, 'x').retryable).toBe(retryable);
  });

  it('keeps the service’s code and maps onto ServiceProblem', () => {
    const error = new ServiceProblemError(402, 'insufficient_credits', 'balance 10, price 80');
    expect(error).toMatchObject({ code: 'insufficient_credits', type: 'ServiceProblem', status: 402, fieldErrors: [] });
  });
});

describe('isMissingRoute', () => {
  it('is true for a 404 or 405 problem only', () => {
    expect(isMissingRoute(new ServiceProblemError(404, 'not_found', 'x'))).toBe(true);
    expect(isMissingRoute(new ServiceProblemError(405, 'http_405', 'x'))).toBe(true);
    expect(isMissingRoute(new ServiceProblemError(400, 'bad', 'x'))).toBe(false);
    expect(isMissingRoute(new Error('404'))).toBe(false);
  });
});

describe('the other client errors', () => {
  it('carry their failure types and whether a retry may help', () => {
    expect(new ServiceUnreachableError('refused', 'ECONNREFUSED')).toMatchObject({
      code: 'service_unreachable',
      type: 'ServiceUnreachable',
      retryable: true,
      causeCode: 'ECONNREFUSED',
    });
    expect(new ServiceTimeoutError('slow')).toMatchObject({ type: 'ServiceTimeout', retryable: true });
    expect(new UnexpectedResponseError('bad body', [])).toMatchObject({ type: 'UnexpectedResponse', retryable: false });
    expect(new SubmitAnswerInvalidError('bad 202', [], 'k', 'r1', undefined, '{}')).toMatchObject({
      type: 'SubmitAnswerInvalid',
      retryable: false,
      requestId: 'r1',
    });
  });

  it('an ambiguous submit is not retryable unless the service honours keys', () => {
    expect(new AmbiguousSubmissionError('no answer', 'k').retryable).toBe(false);
    expect(new AmbiguousSubmissionError('no answer', 'k', true, 3)).toMatchObject({
      type: 'AmbiguousSubmission',
      retryable: true,
      attempts: 3,
      idempotencyKey: 'k',
    });
  });
});
