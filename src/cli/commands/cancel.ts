import type { Command } from 'commander';
import type { ReelflowEnv } from '../../config';
import { progressOf, registerWorkflowCommand } from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { printJson, say } from '../lib/output';
import { cliServiceClient, serviceCliError } from '../lib/service-client';
import { cancelLeftRunning, openRequests, type LeftRunning } from '../lib/terminated-jobs';
import { sendOperatorUpdate } from '../lib/operator';
import { cancelStepUpdate } from '../../workflows/definitions';
import type { PipelineSummary } from '../../workflows/pipeline-types';

/**
 * `reelflow cancel <id>`: request cancellation, wait for the workflow to close, print the report.
 * A pipeline that was terminated ran no cleanup, so its jobs may still be running (and billed) at
 * the service: those are cancelled there directly (REELFLOW_SERVICE_URL and REELFLOW_API_KEY needed).
 */
export function registerCancelCommand(program: Command): void {
  const help = {
    description:
      'Cancel a pipeline or batch, wait until it has closed, and print what each step ended as (exit 0 closed, 4 unknown id)',
    json: 'print the final report as JSON',
    configure: (command: Command) =>
      command
        .option(
          '--step <step>',
          'cancel only this step of a pipeline (its job is cancelled and refunded; no later step starts): the cancelStep update, refused with a reason for a step that is over',
        )
        .option('--reason <text>', "why (kept in the step's error and shown in the Temporal UI); with --step"),
  };
  registerWorkflowCommand<{ json: boolean; step?: string; reason?: string }>(
    program,
    'cancel',
    help,
    async (found, options, env) => {
      if (options.step !== undefined) {
        const answer = await sendOperatorUpdate(found, cancelStepUpdate, {
          step: options.step,
          ...(options.reason ? { reason: options.reason } : {}),
        });
        say(`${found.workflowId}: ${answer.message}; waiting for it to close`, options.json);
        await found.handle.result().catch(() => undefined);
      } else if (found.status === 'RUNNING') {
        await found.handle.cancel();
        say(`cancellation requested for ${found.workflowId}; waiting for it to close`, options.json);
        // The workflow cancels its running service jobs (refunds) before it closes.
        await found.handle.result().catch(() => undefined);
      } else {
        say(`${found.workflowId} had already closed (${found.status.toLowerCase()})`, options.json);
      }
      const closed = await found.handle.describe();
      const { progress, lines } = await progressOf(found);
      const leftRunning =
        found.kind === 'pipeline' && closed.status.name === 'TERMINATED'
          ? await cancelTerminatedJobs(env.service, progress as PipelineSummary)
          : [];
      if (options.json) {
        printJson({
          kind: found.kind,
          workflowId: found.workflowId,
          temporalStatus: closed.status.name,
          progress,
          ...(leftRunning.length > 0 ? { cancelledAtService: leftRunning } : {}),
        });
        return;
      }
      for (const job of leftRunning)
        lines.push(
          `terminated with step ${job.step}'s job ${job.requestId} open: cancelled at the service, now ${job.status}${job.error ? ` (${job.error})` : ''}`,
        );
      say(lines.join('\n'));
    },
  );
}

/** Cancels at the service the jobs a terminated pipeline left open; without service settings, says how. */
async function cancelTerminatedJobs(
  settings: ReelflowEnv['service'],
  summary: PipelineSummary,
): Promise<LeftRunning[]> {
  const open = openRequests(summary);
  if (open.length === 0) return [];
  if (!settings) {
    throw new CliError(
      `the pipeline was terminated with ${open.length} job(s) open at the service (${open.map((o) => o.requestId).join(', ')}); set REELFLOW_SERVICE_URL and REELFLOW_API_KEY and run reelflow cancel again to cancel them`,
      EXIT.failed,
    );
  }
  const service = cliServiceClient(settings);
  try {
    return await cancelLeftRunning(service, summary);
  } catch (error) {
    throw serviceCliError(error, settings, 'cancelling the jobs of a terminated pipeline');
  } finally {
    await service.close();
  }
}
