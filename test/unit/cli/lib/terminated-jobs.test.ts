import { openRequests } from '../../../../src/cli/lib/terminated-jobs';
import type { PipelineSummary } from '../../../../src/workflows/pipeline-types';

describe('openRequests', () => {
  it('lists the requests whose outcome a closed pipeline never recorded, with their cancel URLs', () => {
    const summary = {
      steps: [
        {
          id: 'a',
          attemptLog: [
            { attempt: 1, requestId: 'r1', outcome: 'FAILED' },
            { attempt: 2, requestId: 'r2', cancelUrl: 'https://svc.test/r2/cancel' },
          ],
        },
        { id: 'b', attemptLog: [{ attempt: 1 }] },
        { id: 'c', attemptLog: [{ attempt: 1, requestId: 'r5' }] },
        { id: 'd' },
      ],
    } as unknown as PipelineSummary;
    expect(openRequests(summary)).toEqual([
      { step: 'a', requestId: 'r2', cancelUrl: 'https://svc.test/r2/cancel' },
      { step: 'c', requestId: 'r5' },
    ]);
  });
});
