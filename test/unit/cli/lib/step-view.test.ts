import {
  failedRequestLines,
  formatElapsed,
  stepElapsedMs,
  stepState,
  waitingNote,
  type StepView,
} from '../../../../src/cli/lib/step-view';
import { stepSummary } from '../../../helpers/step-summary';

const step = (more: Partial<StepView>): StepView => stepSummary('render', { status: 'running', ...more });

describe('formatElapsed', () => {
  it.each([
    [0, '0.0s'],
    [12_340, '12.3s'],
    [59_900, '59.9s'],
    [125_000, '2m05s'],
    [-5, '0.0s'],
  ])('%i ms is %s', (ms, text) => {
    expect(formatElapsed(ms)).toBe(text);
  });
});

describe('stepElapsedMs', () => {
  it('runs from the submit to the end, or to now while running, and is unknown before a submit', () => {
    expect(stepElapsedMs(step({ submittedAt: 1_000, finishedAt: 5_000 }), 9_000)).toBe(4_000);
    expect(stepElapsedMs(step({ submittedAt: 1_000 }), 9_000)).toBe(8_000);
    expect(stepElapsedMs(step({}), 9_000)).toBeUndefined();
  });
});

describe('stepState', () => {
  it('shows the phase of a running step', () => {
    expect(stepState(step({ phase: 'waiting' }))).toBe('running/waiting');
    expect(stepState(step({}))).toBe('running');
    expect(stepState(step({ status: 'completed', phase: 'done' }))).toBe('completed');
  });
});

describe('waitingNote', () => {
  it('says how long nothing changed and when the next poll is due', () => {
    expect(waitingNote(step({ lastChangeAt: 0, nextPollAt: 200_000 }), 42_000)).toBe(
      'no change for 42.0s, next poll in 2m38s',
    );
    expect(waitingNote(step({ nextPollAt: 1_000 }), 2_000)).toBe('poll due now');
  });

  it('says nothing of a step that is not running, or knows nothing', () => {
    expect(waitingNote(step({ status: 'completed', lastChangeAt: 0 }), 1_000)).toBe('');
    expect(waitingNote(step({}), 1_000)).toBe('');
  });
});

describe('failedRequestLines', () => {
  it('gives one line per FAILED request, and per CANCELLED one with a reason', () => {
    const lines = failedRequestLines(
      step({
        attemptLog: [
          {
            attempt: 1,
            idempotencyKey: 'k1',
            requestId: 'r1',
            outcome: 'FAILED',
            charged: 0,
            refunded: 0,
            serviceError: { code: 'oom', message: 'out of memory' },
          },
          { attempt: 2, idempotencyKey: 'k2', outcome: 'FAILED', charged: 0, refunded: 0 },
          { attempt: 3, idempotencyKey: 'k3', requestId: 'r3', outcome: 'CANCELLED', charged: 0, refunded: 0 },
          { attempt: 4, idempotencyKey: 'k4', requestId: 'r4', outcome: 'COMPLETED', charged: 0, refunded: 0 },
        ],
      }),
    );
    expect(lines).toEqual([
      '      attempt 1 r1 FAILED: oom: out of memory',
      '      attempt 2 - FAILED: no reason given by the service',
    ]);
  });
});
