import type { ServiceClient } from '../../client/types';
import type { PipelineSummary } from '../../workflows/pipeline-types';

/** A service job a closed pipeline left without a terminal state, and what cancelling it at the service gave. */
export interface LeftRunning {
  step: string;
  requestId: string;
  /** The service's state after the cancel (CANCELLED, or the terminal state it had already reached). */
  status: string;
  /** Why the cancel could not be made, if it could not. */
  error?: string;
}

/**
 * Request ids of a pipeline's steps whose outcome it never recorded: a terminated pipeline ran no
 * cleanup (terminate stops the workflow without letting it cancel anything), so its paid jobs may
 * still be queued or running at the service.
 */
export function openRequests(summary: PipelineSummary): Array<{ step: string; requestId: string; cancelUrl?: string }> {
  return summary.steps.flatMap((step) =>
    (step.attemptLog ?? [])
      .filter((a) => a.requestId !== undefined && a.outcome === undefined)
      .map((a) => ({ step: step.id, requestId: a.requestId!, ...(a.cancelUrl ? { cancelUrl: a.cancelUrl } : {}) })),
  );
}

/**
 * Cancels at the service every job a closed pipeline left open (`reelflow cancel` of a terminated
 * pipeline): each is CANCELLED and refunded, or already terminal (then its state is reported).
 */
export async function cancelLeftRunning(service: ServiceClient, summary: PipelineSummary): Promise<LeftRunning[]> {
  const done: LeftRunning[] = [];
  for (const open of openRequests(summary)) {
    try {
      const answer = await service.cancel(open.requestId, open.cancelUrl ? { cancelUrl: open.cancelUrl } : {});
      done.push({ step: open.step, requestId: open.requestId, status: answer.status });
    } catch (error) {
      // A job already terminal answers cancel_too_late; its state is then read back.
      const status = await service.status(open.requestId).then(
        (s) => s.status,
        () => 'UNKNOWN',
      );
      done.push({
        step: open.step,
        requestId: open.requestId,
        status,
        ...(status === 'UNKNOWN' ? { error: error instanceof Error ? error.message : String(error) } : {}),
      });
    }
  }
  return done;
}
