import type { ReelflowActivities } from '../../../activities';
import {
  OP_RESULT_MODEL_PREFIX,
  type OpInputs,
  type OpName,
  type OpStepOutput,
} from '../../../pipeline-spec/steps/op-types';
import { proxyReelflowActivities } from '../../activity-proxy';

/**
 * Running one local media operation from a workflow: the `runOp` activity (ffmpeg on a worker, the
 * output put into the media store). Heartbeats while ffmpeg runs, so a lost worker is noticed in a
 * minute; retried with backoff, except for the failures retrying cannot help (OpInputInvalid, OpFailed).
 */

const OP_TIMEOUT = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
} as const;

/** Options of an operation run from a workflow. */
export interface RunOpOptions {
  /** The node key (`<pipeline>/op/<step>`): names the output file; default `<workflow id>/op/<op>`. */
  key: string;
  /** The pipeline recorded as the stored output's referrer (media gc keeps it while the pipeline is kept). */
  pipeline?: string;
  /** The Temporal UI's summary of the activity (default `<op>`). */
  summary?: string;
}

/** Runs operation `op` on `input` and returns its output shaped as a step's (`videos[0].url`, `images[0].url`). */
export async function runOp<N extends OpName>(op: N, input: OpInputs[N], options: RunOpOptions): Promise<OpStepOutput> {
  const activities = proxyReelflowActivities<Pick<ReelflowActivities, 'runOp'>>({
    ...OP_TIMEOUT,
    summary: options.summary ?? op,
  });
  const result = await activities.runOp({
    op,
    input,
    key: options.key,
    // Workflow time: the same on every attempt, so a signed output URL is the same too.
    signedAt: Date.now(),
    ...(options.pipeline ? { pipeline: options.pipeline } : {}),
  });
  return {
    request_id: options.key,
    status: 'COMPLETED',
    model: `${OP_RESULT_MODEL_PREFIX}${op}`,
    credits_used: 0,
    ...result,
  };
}
