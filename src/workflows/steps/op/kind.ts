import type { JobResult } from '../../../contract';
import { referencedStepIds } from '../../../pipeline-spec/references';
import type { OpStep } from '../../../pipeline-spec/steps/op';
import { opKeyOf, type OpInputs, type OpName, type OpStepOutput } from '../../../pipeline-spec/steps/op-types';
import type { StepKind, StepProgress } from '../kind';
import { runOp } from './run-op';

/**
 * The local media operation as a kind of step (`"op": "concat" | "trim" | "mux_audio" | "frame"`):
 * one `runOp` activity on a worker, no service call, no credits. Its output's stored copies show in
 * its row at once (`archived`), so the next step reads them as it reads archived outputs.
 */
export const opStep: StepKind<OpStep> = {
  key: 'op',
  open: () => undefined,
  dependencies: (step) => referencedStepIds(step.input),
  // Nothing is paid: there is nothing to check before paying.
  preflights: () => false,
  summary: (step) => ({ op: step.op }),
  async run(step, run) {
    const key = opKeyOf(run.pipeline.spec.name, step.id, run.item?.index);
    const ran: { output?: OpStepOutput } = {};
    const progress: StepProgress = {
      view: () =>
        ran.output
          ? { phase: 'done', output: ran.output as unknown as JobResult, archived: ran.output.archived }
          : { phase: 'editing' },
      // Nothing waits on a service answer: archive copies of earlier outputs may start beside it.
      submitted: () => true,
      holdsTaskOpen: () => false,
    };
    run.observe(progress);
    ran.output = await runOp(step.op as OpName, run.input as unknown as OpInputs[OpName], {
      key,
      pipeline: run.pipeline.spec.name,
      summary: `${step.op} ${step.id}${run.item ? `[${run.item.index}]` : ''}`,
    });
    run.observe(progress);
    return { status: 'completed', result: ran.output as unknown as JobResult };
  },
  resume: (_step, carried) => ({ status: 'completed', carriedFrom: carried.paidInRunId, output: carried.output }),
  revokeAhead: async () => undefined,
  settled: async () => undefined,
};
