import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/definitions';
import { expectLedgersAgree, runFaultSuite, type FaultRunFigures } from './fault-run';

/**
 * Nothing lost, nothing billed twice: pipelines under every fault the service can inject, with the
 * worker killed twice, the bridge once and the service once (all SIGKILL, all real child processes).
 * `npm test` runs FAULT_PIPELINES (default 30: enough that the run is not drained before its last kill) pipelines;
 * `npm run test:faults` runs 50.
 * FAULT_IDEMPOTENCY (default honoured) is the worker's REELFLOW_SERVICE_IDEMPOTENCY:
 * `npm run test:faults:unknown` runs the same suite with `unknown`, resolving ambiguous steps by update.
 */
const COUNT = Number(process.env.FAULT_PIPELINES ?? 30);
const MODE = process.env.FAULT_IDEMPOTENCY === 'unknown' ? 'unknown' : 'honoured';
let env: TestWorkflowEnvironment;
let figures: FaultRunFigures;

beforeAll(async () => {
  env = await startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS });
  figures = await runFaultSuite({
    client: env.client,
    temporalAddress: env.address,
    count: COUNT,
    idempotency: MODE,
    log: (line) => process.stdout.write(`[faults] ${line}\n`),
  });
  // Logs and secrets stay out of what is printed.
  const { logs, secrets, failureReasons, explained, ...printed } = figures;
  void logs;
  void secrets;
  process.stdout.write(
    `[faults] figures ${JSON.stringify(printed, null, 1)}\n[faults] failures ${JSON.stringify(failureReasons, null, 1)}\n`,
  );
  process.stdout.write(
    `[faults] each pipeline, from the service's books:\n${explained.map((line) => `[faults]   ${line}`).join('\n')}\n`,
  );
}, 600_000);

afterAll(async () => {
  await env?.teardown();
});

describe(`fault suite (${COUNT} pipelines at once, idempotency ${MODE})`, () => {
  it("every pipeline ends in the state the faults the service injected on its path allow, its records matching the service's journal", () => {
    // explainOutcomes (fault-explain.ts): per step, the service's jobs are the step's attempts; every
    // FAILED job was failed on purpose; a step fails only when its whole policy was failed that way.
    expect(figures.unexplained).toEqual([]);
    expect(figures.explained).toHaveLength(COUNT);
  });

  it('the faults really happened, as the service journalled them: dropped and duplicated deliveries, dropped answers, injected 5xx/429 and failures', () => {
    expect(figures.injected).toEqual(
      expect.objectContaining({
        delivery_dropped: expect.any(Number),
        delivery_duplicated: expect.any(Number),
        submit_answer_dropped: expect.any(Number),
        submit_error: expect.any(Number),
        job_failed: expect.any(Number),
      }),
    );
    expect(figures.faults.deliveriesDropped).toBeGreaterThan(0);
    expect(figures.faults.deliveriesDuplicated).toBeGreaterThan(0);
    expect(figures.faults.submitAnswersDropped).toBe(figures.injected.submit_answer_dropped);
  });

  it("every kill (worker twice, bridge, service) hit work in flight by the service's records; the bridge's outage had deliveries due", () => {
    expect(Object.fromEntries(Object.entries(figures.workAtKills).map(([what, n]) => [what, n.length]))).toEqual({
      worker: 2,
      bridge: 1,
      service: 1,
    });
    expect(figures.killsWithoutWork).toEqual([]);
  });

  it('no step has two billed jobs and no idempotency key made two jobs', () => {
    expect(figures.duplicatesFound).toBe(0);
    expect(figures.keysWithTwoJobs).toBe(0);
  });

  it("the service's ledger and reelflow's ledgers agree to the credit", () => {
    expectLedgersAgree(figures);
  });

  it("every completed pipeline's outputs exist", () => {
    expect(figures.completed).toBeGreaterThan(0);
    expect(figures.missingOutputs).toEqual([]);
  });

  it('no workflow task failed on non-determinism when restarted workers replayed the histories', () => {
    // Three worker processes ran (start + 2 restarts after SIGKILL); their logs are in the run's logs.
    expect(figures.logs.match(/reelflow worker: task queue/g)).toHaveLength(3);
    expect(figures.logs).not.toMatch(/nondeterminism|TMPRL1100|DeterminismViolation/i);
  });

  it('no signing secret or API key appears in the logs of the run', () => {
    expect(figures.logs.length).toBeGreaterThan(0);
    for (const secret of figures.secrets) expect(figures.logs.includes(secret)).toBe(false);
  });

  it('nothing billed that the report does not show: every orphaned job is listed by reelflow orphans', () => {
    expect(figures.orphansNotReported).toEqual([]);
  });

  if (MODE === 'honoured') {
    it('honoured: no credit is orphaned (lost answers retried with the same key and adopted)', () => {
      expect(figures.orphans.jobs).toBe(0);
      expect(figures.credits.orphanedNet).toBe(0);
      expect(figures.credits.reelflowNet).toBe(figures.credits.completedJobsPrice);
    });
  } else {
    it('unknown: every ambiguous step waited and was resolved by an update (adopt or resubmit)', () => {
      expect(figures.ambiguous.waited).toBeGreaterThan(0);
      expect(figures.ambiguous.adopted + figures.ambiguous.resubmitted).toBe(figures.ambiguous.waited);
    });
  }
});
