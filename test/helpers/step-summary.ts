import type { JobResult } from '../../src/contract';
import type { StepOutput, StepSummary } from '../../src/workflows/pipeline-types';

/**
 * A pipeline step's summary row as unit tests need one: an upscale step `id` of pipeline `p`, not
 * started, nothing spent; `extra` sets what the test is about.
 */
export function stepSummary(id: string, extra: Partial<StepSummary> = {}): StepSummary {
  return {
    id,
    model: 'service-upscale-video-fast',
    status: 'pending',
    stepKey: `p/job/${id}`,
    requestIds: [],
    attempts: 0,
    quoted: 0,
    charged: 0,
    refunded: 0,
    polls: 0,
    ...extra,
  };
}

/** A step's output as a paid job's result (undefined for a step that made no media, such as an approval gate). */
export function jobOutput(output: StepOutput | undefined): JobResult | undefined {
  return output && 'videos' in output ? output : undefined;
}
