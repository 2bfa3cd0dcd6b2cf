import { foldStep } from '../../../../src/workflows/steps/ledger';
import type { StepRun } from '../../../../src/workflows/steps/step-run';
import type { StepAttempt } from '../../../../src/workflows/pipeline-types';
import { stepSummary } from '../../../helpers/step-summary';

function runWith(attempts: Partial<StepAttempt>[], quote: { credits?: number; error?: string }): StepRun {
  const row = stepSummary('render', { status: 'running' });
  return {
    row,
    attempts: attempts.map((a, i) => ({ attempt: i + 1, idempotencyKey: `k${i + 1}`, charged: 0, refunded: 0, ...a })),
    quote,
  } as unknown as StepRun;
}

describe('foldStep (a step row from its attempts and quote)', () => {
  it('sums charges and refunds over every attempt and counts them', () => {
    const run = runWith(
      [
        { requestId: 'r1', charged: 80, refunded: 80 },
        { requestId: 'r2', charged: 80, refunded: 0 },
      ],
      { credits: 80 },
    );
    foldStep(run);
    expect(run.row).toMatchObject({ attempts: 2, quoted: 80, charged: 160, refunded: 80, requestIds: ['r1', 'r2'] });
  });

  it('lists only the request ids the service gave (an ambiguous attempt has none)', () => {
    const run = runWith([{}, { requestId: 'r2' }], { credits: 10 });
    foldStep(run);
    expect(run.row.requestIds).toEqual(['r2']);
    expect(run.row.attempts).toBe(2);
  });

  it('counts a quote not yet known as 0 and keeps why a quote failed', () => {
    const run = runWith([{ requestId: 'r1', charged: 30 }], { error: 'quote refused: 422' });
    foldStep(run);
    expect(run.row.quoted).toBe(0);
    expect(run.row.charged).toBe(30);
    expect(run.row.quoteError).toBe('quote refused: 422');
  });

  it('is idempotent: folding twice gives the same row (it is folded after every change)', () => {
    const run = runWith([{ requestId: 'r1', charged: 5, refunded: 5 }], { credits: 5 });
    foldStep(run);
    const once = structuredClone(run.row);
    foldStep(run);
    expect(run.row).toEqual(once);
  });
});
