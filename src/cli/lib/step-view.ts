import type { StepSummary } from '../../workflows/pipeline-types';

/**
 * How a person sees one step: its request id as soon as the submit returned, the time from submit to
 * terminal state, how long a waiting step has gone without a change and when its next fallback poll
 * is due, and one line per failed service request with the service's own code and message.
 * Pipelines started by older workers lack the optional fields; the lines then say less, never wrong.
 */

/** A step as the CLI reads it (older pipelines lack the optional clock and attempt fields). */
export type StepView = StepSummary;

const time = (ms: number | undefined): number | undefined =>
  typeof ms === 'number' && Number.isFinite(ms) ? ms : undefined;

/** `12.3s` / `2m05s`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${String(Math.floor(seconds % 60)).padStart(2, '0')}s`;
}

/** Submit → terminal (or → now while running), when the step says when it was submitted. */
export function stepElapsedMs(step: StepView, now: number): number | undefined {
  const submitted = time(step.submittedAt);
  if (submitted === undefined) return undefined;
  return (time(step.finishedAt) ?? now) - submitted;
}

/** `running/waiting`, or the plain status. */
export function stepState(step: StepView): string {
  return step.status === 'running' && step.phase ? `running/${step.phase}` : step.status;
}

/** `no change for 42s, next poll in 2m18s` for a running step, or '' when nothing is known. */
export function waitingNote(step: StepView, now: number): string {
  if (step.status !== 'running') return '';
  const parts: string[] = [];
  const changed = time(step.lastChangeAt);
  if (changed !== undefined) parts.push(`no change for ${formatElapsed(now - changed)}`);
  const poll = time(step.nextPollAt);
  if (poll !== undefined) parts.push(poll > now ? `next poll in ${formatElapsed(poll - now)}` : 'poll due now');
  return parts.join(', ');
}

/** One line per request that ended FAILED or CANCELLED, with the service's code and message. */
export function failedRequestLines(step: StepView): string[] {
  return (step.attemptLog ?? [])
    .filter((r) => r.outcome === 'FAILED' || (r.outcome === 'CANCELLED' && r.serviceError))
    .map((r) => {
      const reason = r.serviceError
        ? `${r.serviceError.code}: ${r.serviceError.message}`
        : 'no reason given by the service';
      return `      attempt ${r.attempt} ${r.requestId ?? '-'} ${r.outcome}: ${reason}`;
    });
}
