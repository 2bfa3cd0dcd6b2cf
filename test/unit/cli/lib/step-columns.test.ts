import { creditsText, joinColumns, stepColumns } from '../../../../src/cli/lib/step-columns';
import type { StepView } from '../../../../src/cli/lib/step-view';

/** The columns a step's line shares between the flat list of version 1 and a graph's tree. */

const NOW = Date.parse('2026-11-23T12:00:00.000Z');

describe('step columns', () => {
  it('credits: net with the refund, else the quote, else nothing', () => {
    expect(creditsText(100, 30, 100)).toBe('70 credits (refunded 30)');
    expect(creditsText(100, 0)).toBe('100 credits');
    expect(creditsText(0, 0, 80)).toBe('quoted 80');
    expect(creditsText(0, 0)).toBe('');
  });

  it('a step without request ids shows the last attempt’s, and the columns keep their widths', () => {
    const step = {
      id: 'generate',
      model: 'service-video-cinema-long-form-from-references',
      status: 'running',
      phase: 'waiting',
      stepKey: 'p/job/generate',
      requestIds: [],
      attemptLog: [{ attempt: 1, idempotencyKey: 'k', requestId: 'req-9', charged: 0, refunded: 0 }],
      attempts: 1,
      quoted: 50,
      charged: 0,
      refunded: 0,
      polls: 0,
      submittedAt: NOW - 3000,
    } as StepView;
    const columns = stepColumns(step, NOW);
    expect(columns).toMatchObject({
      state: 'running/waiting',
      request: 'req-9',
      elapsed: '3.0s',
      credits: 'quoted 50',
    });
    const line = joinColumns('  generate    ', columns);
    expect(line.indexOf('req-9')).toBe(14 + 1 + 24 + 1);
    expect(line.indexOf('3.0s')).toBe(14 + 1 + 24 + 1 + 36 + 1);
  });
});
