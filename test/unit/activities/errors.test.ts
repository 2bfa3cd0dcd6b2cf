import { ApplicationFailure } from '@temporalio/common';
import { toApplicationFailure } from '../../../src/activities/errors';
import {
  AmbiguousSubmissionError,
  ServiceProblemError,
  ServiceTimeoutError,
  ServiceUnreachableError,
  UnexpectedResponseError,
} from '../../../src/client/errors';

function mapped(error: unknown): ApplicationFailure {
  const result = toApplicationFailure(error);
  expect(result).toBeInstanceOf(ApplicationFailure);
  return result as ApplicationFailure;
}

describe('client errors mapped to ApplicationFailure', () => {
  it.each([
    [422, 'validation_failed'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [402, 'insufficient_credits'],
    [404, 'not_found'],
  ])('HTTP %i (%s) is not retried', (status, code) => {
    const failure = mapped(
      new ServiceProblemError(status, code, `problem ${code}`, [{ path: 'image_urls.0', message: 'bad' }]),
    );
    expect(failure.type).toBe(`ServiceProblem:${code}`);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.details?.[0]).toMatchObject({
      type: 'ServiceProblem',
      code,
      status,
      fieldErrors: [{ path: 'image_urls.0', message: 'bad' }],
    });
    expect(failure.message).toContain('image_urls.0: bad');
  });

  it.each([
    [429, 'rate_limited'],
    [503, 'service_unavailable'],
    [500, 'internal_error'],
  ])('HTTP %i (%s) is retried, honouring Retry-After', (status, code) => {
    const failure = mapped(new ServiceProblemError(status, code, 'busy', [], 7));
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe('7s');
  });

  it('maps transport errors by their stable type', () => {
    expect(mapped(new ServiceUnreachableError('down', 'ECONNREFUSED'))).toMatchObject({
      type: 'ServiceUnreachable',
      nonRetryable: false,
    });
    expect(mapped(new ServiceTimeoutError('slow'))).toMatchObject({ type: 'ServiceTimeout', nonRetryable: false });
    expect(mapped(new UnexpectedResponseError('odd', []))).toMatchObject({
      type: 'UnexpectedResponse',
      nonRetryable: true,
    });
    const ambiguous = mapped(new AmbiguousSubmissionError('lost answer', 'reelflow:x:1'));
    expect(ambiguous).toMatchObject({ type: 'AmbiguousSubmission', nonRetryable: true });
    expect(ambiguous.details?.[0]).toEqual({
      type: 'AmbiguousSubmission',
      idempotencyKey: 'reelflow:x:1',
      attempts: 1,
    });
    // Under `honoured` the same key may be sent again by a later activity attempt.
    expect(mapped(new AmbiguousSubmissionError('lost answer', 'reelflow:x:1', true, 5))).toMatchObject({
      nonRetryable: false,
      details: [{ attempts: 5 }],
    });
  });

  it('leaves other errors alone', () => {
    const plain = new Error('bug');
    expect(toApplicationFailure(plain)).toBe(plain);
  });
});
