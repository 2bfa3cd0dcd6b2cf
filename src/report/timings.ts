import type { StepTimings } from './model';

/**
 * Per-step ISO timestamps a pipeline records (workflow time). Optional: pipelines that predate them
 * show "—" in the report instead of a guess.
 */
export interface StepTimestamps {
  /** The step's submit was acknowledged by the service (request id known). */
  submittedAt?: number | string;
  /** The step's outcome became known (webhook, poll or cancel). */
  finishedAt?: number | string;
}

function ms(at: number | string | undefined): number | undefined {
  const value = typeof at === 'number' ? at : at === undefined ? NaN : Date.parse(at);
  return Number.isFinite(value) ? value : undefined;
}

/** Seconds to one decimal, or null. */
function seconds(ms: number | null): number | null {
  return ms === null || !Number.isFinite(ms) ? null : Math.max(0, Math.round(ms / 100) / 10);
}

/**
 * Where each step's time went: queued at the service (service time minus rendering), rendering (the
 * service's `timings.inference_seconds`), and handing off (the previous step's outcome known, or the
 * pipeline's start for the first step, until this step's submit was acknowledged).
 */
export function stepTimings(
  steps: ReadonlyArray<{ times: StepTimestamps; inferenceSeconds: number | null }>,
  pipelineStartedAt: number | null,
): StepTimings[] {
  return steps.map((step, index) => {
    const submittedAt = ms(step.times.submittedAt);
    const finishedAt = ms(step.times.finishedAt);
    const rendering = step.inferenceSeconds;
    const serviceMs = submittedAt !== undefined && finishedAt !== undefined ? finishedAt - submittedAt : null;
    const queuedMs = serviceMs !== null && rendering !== null ? serviceMs - rendering * 1000 : null;
    const previousEnd = index === 0 ? pipelineStartedAt : (ms(steps[index - 1]?.times.finishedAt) ?? null);
    const handoffMs = submittedAt !== undefined && previousEnd !== null ? submittedAt - previousEnd : null;
    return {
      queuedSeconds: seconds(queuedMs),
      renderingSeconds: rendering === null ? null : Math.round(rendering * 10) / 10,
      handoffSeconds: seconds(handoffMs),
    };
  });
}
