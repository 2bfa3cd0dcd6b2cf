import { pipelineLines, progressKey, stepLines, waitingLines } from '../../../../src/cli/lib/output';
import type { StepView } from '../../../../src/cli/lib/step-view';
import type { PipelineSummary } from '../../../../src/workflows/pipeline-types';

/** What `reelflow run` / `status` print for a step, from the fields a pipeline reports. */

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const at = (secondsBeforeNow: number) => NOW - secondsBeforeNow * 1000;

function step(overrides: Partial<StepView>): StepView {
  return {
    id: 'generate',
    model: 'service-video-cinema-long-form-from-references',
    status: 'pending',
    stepKey: 'p/job/generate',
    requestIds: [],
    attempts: 0,
    quoted: 0,
    charged: 0,
    refunded: 0,
    polls: 0,
    ...overrides,
  };
}

describe('step lines', () => {
  it('a waiting step shows its request id, time since submit, time since the last change and the next poll', () => {
    const lines = stepLines(
      step({
        status: 'running',
        phase: 'waiting',
        requestIds: ['req-1'],
        quoted: 100,
        charged: 100,
        submittedAt: at(12),
        lastChangeAt: at(12),
        nextPollAt: at(-168),
      }),
      NOW,
    );
    expect(lines).toEqual([
      expect.stringMatching(
        /^ {2}generate +running\/waiting +req-1 +12\.0s +100 credits {2}\(no change for 12\.0s, next poll in 2m48s\)$/,
      ),
    ]);
  });

  it('a completed step shows submit → terminal time, not the time a follower happened to see', () => {
    const [line] = stepLines(
      step({ status: 'completed', requestIds: ['req-1'], submittedAt: at(40), finishedAt: at(38.8), charged: 10 }),
      NOW,
      0,
    );
    expect(line).toMatch(/req-1 +1\.2s +10 credits$/);
  });

  it('a failed step has one line per failed request with the service’s code and message', () => {
    const lines = stepLines(
      step({
        status: 'failed',
        requestIds: ['req-1', 'req-2'],
        charged: 200,
        refunded: 200,
        error: 'failed 2 time(s); policy allows 1 resubmit(s); every attempt was refunded',
        attemptLog: [
          {
            attempt: 1,
            idempotencyKey: 'k1',
            charged: 100,
            refunded: 100,
            requestId: 'req-1',
            outcome: 'FAILED',
            serviceError: {
              code: 'input_refused',
              message: 'image_urls.1: host example.invalid does not resolve (ENOTFOUND)',
            },
          },
          { attempt: 2, idempotencyKey: 'k2', charged: 100, refunded: 100, requestId: 'req-2', outcome: 'FAILED' },
        ],
      }),
      NOW,
    );
    expect(lines.slice(1)).toEqual([
      '      attempt 1 req-1 FAILED: input_refused: image_urls.1: host example.invalid does not resolve (ENOTFOUND)',
      '      attempt 2 req-2 FAILED: no reason given by the service',
    ]);
    expect(lines[0]).toContain('0 credits (refunded 200)  failed 2 time(s)');
  });

  it('says nothing it does not know: a pipeline without times shows what the follower observed', () => {
    const [line] = stepLines(step({ status: 'running', requestIds: [] }), NOW, 1500);
    expect(line).toMatch(/^ {2}generate +running +- +1\.5s$/);
    expect(waitingLines(summary([step({ status: 'running' })]), NOW)).toEqual([]);
  });
});

function summary(steps: StepView[]): PipelineSummary {
  return {
    name: 'p',
    status: 'running',
    currentStep: steps[0]?.id ?? null,
    budgetCredits: null,
    ledger: { quoted: 0, charged: 0, refunded: 0, net: 0 },
    steps,
    outputs: {},
  };
}

describe('pipeline lines', () => {
  it('reprint when a request fails or the next poll moves; the failure message closes the table', () => {
    const waiting = summary([step({ status: 'running', phase: 'waiting', requestIds: ['r'], nextPollAt: at(-10) })]);
    const polled = summary([step({ status: 'running', phase: 'waiting', requestIds: ['r'], nextPollAt: at(-30) })]);
    expect(progressKey(waiting)).not.toBe(progressKey(polled));
    expect(waitingLines(waiting, NOW)).toEqual(['  generate     running/waiting: next poll in 10.0s']);
    const failed = {
      ...summary([step({ status: 'failed' })]),
      status: 'failed' as const,
      error: 'pipeline p failed at step generate: steps.0.input.image_urls.0: host x.invalid does not resolve',
    };
    expect(pipelineLines(failed, 'pipeline/p', undefined, {}, NOW).at(-1)).toBe(
      '  error: pipeline p failed at step generate: steps.0.input.image_urls.0: host x.invalid does not resolve',
    );
  });
});
