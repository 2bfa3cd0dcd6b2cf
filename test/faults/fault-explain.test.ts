import type { DeliveryView, InjectedFault, JobView } from '../../src/local-service';
import type { PipelineSummary, StepAttempt, StepSummary } from '../../src/workflows/pipeline-types';
import { explainOutcomes, killsWithoutWork, type ServiceBooks } from './fault-explain';

/** The fault suite's criteria on small hand-made books: each one goes red on the fault it exists for. */

const KEY = (n: number) => `reelflow:p/job/gen:run1:${n}`;
const job = (id: string, n: number, status: JobView['status'], over: Partial<JobView> = {}): JobView => ({
  id,
  model: 'm',
  status,
  idempotencyKey: KEY(n),
  creditsCharged: 80,
  creditsRefunded: status === 'COMPLETED' ? 0 : 80,
  receivedAt: 1000,
  submittedAt: 1000,
  startedAt: 1000,
  completedAt: 2000,
  error: status === 'FAILED' ? { code: 'generation_failed', message: 'x' } : null,
  ...over,
});
const attempt = (
  n: number,
  requestId: string,
  outcome: StepAttempt['outcome'],
  over: Partial<StepAttempt> = {},
): StepAttempt => ({
  attempt: n,
  idempotencyKey: KEY(n),
  requestId,
  outcome,
  learnedBy: 'poll',
  charged: 80,
  refunded: outcome === 'COMPLETED' ? 0 : 80,
  ...over,
});
function outcome(
  status: PipelineSummary['status'],
  attempts: StepAttempt[],
  stepStatus: StepSummary['status'] = status === 'completed' ? 'completed' : 'failed',
) {
  const charged = attempts.reduce((s, a) => s + a.charged, 0);
  const refunded = attempts.reduce((s, a) => s + a.refunded, 0);
  const step = {
    id: 'gen',
    stepKey: 'p/job/gen',
    status: stepStatus,
    attemptLog: attempts,
    requestIds: attempts.map((a) => a.requestId),
    charged,
    refunded,
  } as unknown as StepSummary;
  const summary = {
    status,
    steps: [step],
    ledger: { quoted: charged, charged, refunded, net: charged - refunded },
  } as unknown as PipelineSummary;
  return { name: 'p', summary, error: null };
}
const fault = (kind: InjectedFault['kind'], requestId: string | null, key: string | null = null): InjectedFault => ({
  kind,
  requestId,
  idempotencyKey: key,
  at: 1500,
});
const books = (jobs: JobView[], faults: InjectedFault[] = [], deliveries: DeliveryView[] = []): ServiceBooks => ({
  jobs,
  faults,
  deliveries,
});
const explain = (o: ReturnType<typeof outcome>, b: ServiceBooks) =>
  explainOutcomes([o], b, { maxResubmits: 1, idempotency: 'honoured', kills: [] }).unexplained;

it('a failed job resubmitted after an injected failure, then completed: explained', () => {
  const o = outcome('completed', [attempt(1, 'a', 'FAILED'), attempt(2, 'b', 'COMPLETED')]);
  expect(explain(o, books([job('a', 1, 'FAILED'), job('b', 2, 'COMPLETED')], [fault('job_failed', 'a')]))).toEqual([]);
});

it('a FAILED job the service did not fail on purpose is unexplained', () => {
  const o = outcome('completed', [attempt(1, 'a', 'FAILED'), attempt(2, 'b', 'COMPLETED')]);
  expect(explain(o, books([job('a', 1, 'FAILED'), job('b', 2, 'COMPLETED')]))).toEqual([
    expect.stringContaining('without an injected failure or restart'),
  ]);
});

it('a pipeline that failed although its policy had resubmits left is unexplained; one that exhausted it is not', () => {
  const early = outcome('failed', [attempt(1, 'a', 'FAILED')]);
  expect(explain(early, books([job('a', 1, 'FAILED')], [fault('job_failed', 'a')]))).toEqual([
    expect.stringMatching(/failed after 1 injected failure.*allow completed/),
  ]);
  const exhausted = outcome('failed', [attempt(1, 'a', 'FAILED'), attempt(2, 'b', 'FAILED')]);
  expect(
    explain(
      exhausted,
      books(
        [job('a', 1, 'FAILED'), job('b', 2, 'FAILED')],
        [fault('job_failed', 'a'), fault('service_restarted', 'b')],
      ),
    ),
  ).toEqual([]);
});

it('a second job under the step (billed twice) and a ledger that differs from the service are unexplained', () => {
  const o = outcome('completed', [attempt(1, 'a', 'COMPLETED')]);
  expect(explain(o, books([job('a', 1, 'COMPLETED'), job('x', 1, 'COMPLETED')]))).toEqual([
    expect.stringContaining('service job x (COMPLETED'),
  ]);
  const cheap = outcome('completed', [attempt(1, 'a', 'COMPLETED', { charged: 40 })]);
  expect(explain(cheap, books([job('a', 1, 'COMPLETED')]))[0]).toMatch(
    /charged\/refunded 40\/0, the service's 80\/0.*ledger net 40 ≠ the service's net 80/,
  );
});

it("a dropped answer must end on the dropped answer's job, and a webhook outcome needs a delivery the service sent", () => {
  const o = outcome('completed', [attempt(1, 'a', 'COMPLETED', { learnedBy: 'webhook' })]);
  const dropped = {
    id: 'd',
    eventId: 'e',
    eventType: 'generation.completed',
    requestId: 'a',
    endpointId: 'w',
    state: 'dropped',
    attempts: 0,
    nextAttemptAt: null,
    lastStatus: null,
    lastError: null,
    createdAt: 2000,
    duplicate: false,
  } as DeliveryView;
  expect(
    explain(o, books([job('a', 1, 'COMPLETED')], [fault('submit_answer_dropped', 'z', KEY(1))], [dropped])),
  ).toEqual([
    expect.stringMatching(
      /dropped answer's job z was not the one kept.*learned by a webhook the service never sent.*every delivery was dropped/,
    ),
  ]);
});

it('a kill with no job in flight, and a bridge outage with no delivery due, are reported', () => {
  const b = books([job('a', 1, 'COMPLETED', { submittedAt: 1000, completedAt: 2000 })]);
  expect(killsWithoutWork([{ what: 'worker', at: 1500, back: 1600 }], b)).toEqual([]);
  expect(killsWithoutWork([{ what: 'service', at: 2500, back: 2600 }], b)).toEqual([
    expect.stringContaining('service killed'),
  ]);
  expect(killsWithoutWork([{ what: 'bridge', at: 1500, back: 1600 }], b)).toEqual([
    expect.stringContaining('no delivery due'),
  ]);
});
