import * as os from 'node:os';
import type { Command } from 'commander';
import type { ApprovalVerdict, DecideApprovalArgs } from '../../workflows/approval-types';
import { decideApprovalUpdate } from '../../workflows/definitions';
import { cliEnv, findWorkflow, pipelineSummary, withTemporal, type FoundWorkflow } from '../lib/context';
import { CliError } from '../lib/errors';
import { EXIT } from '../lib/exit';
import { sendOperatorUpdate } from '../lib/operator';
import { printJson, say } from '../lib/output';

/**
 * `reelflow approve <pipeline> <step>` and `reelflow reject <pipeline> <step> --reason <text>`: decide an
 * approval gate that waits for a person (the `decideApproval` update; the Temporal UI sends the same).
 */

interface DecideOptions {
  reason?: string;
  by?: string;
  json: boolean;
}

/** Who decides when `--by` says nothing: the account running the CLI. */
function whoAmI(): string | undefined {
  try {
    return os.userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

/** Refuses, with the pipeline's own steps, a step that is not there or is no approval gate (exit 2). */
async function checkGate(found: FoundWorkflow, step: string): Promise<void> {
  if (found.kind !== 'pipeline' || found.status !== 'RUNNING') return; // sendOperatorUpdate says why.
  const summary = await pipelineSummary(found.handle);
  const row = summary.steps.find((s) => s.id === step);
  const gates = summary.steps.flatMap((s) => ('op' in s && s.op === 'approval' ? [s.id] : []));
  const known = `approval gates of ${found.workflowId}: ${gates.length ? gates.join(', ') : 'none'}`;
  if (!row) throw new CliError(`step: no step "${step}" in ${found.workflowId} (${known})`, EXIT.usage);
  if (!('op' in row)) throw new CliError(`step: ${step} is not an approval gate (${known})`, EXIT.usage);
}

async function decide(id: string, step: string, decision: ApprovalVerdict, options: DecideOptions): Promise<void> {
  const by = options.by ?? whoAmI();
  const args: DecideApprovalArgs = {
    step,
    decision,
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(by ? { by } : {}),
  };
  await withTemporal(cliEnv(), async ({ client }) => {
    const found = await findWorkflow(client, id);
    await checkGate(found, step);
    const answer = await sendOperatorUpdate(found, decideApprovalUpdate, args);
    if (options.json) printJson({ workflowId: found.workflowId, ...answer });
    else say(`${found.workflowId}: ${answer.message}`);
  });
}

const EXITS = '(exit 0 decided, 2 refused with the reason, 4 unknown id)';

/** `reelflow approve <pipeline> <step>`. */
export function registerApproveCommand(program: Command): void {
  program
    .command('approve')
    .description(`Approve an approval gate waiting for a person: the steps after it start ${EXITS}`)
    .argument('<pipeline>', 'pipeline/<name> or a bare name')
    .argument('<step>', "the gate's step id")
    .option('--by <name>', 'who approves (default: the user running reelflow)')
    .option('--reason <text>', 'a note kept with the decision')
    .option('--json', "print the pipeline's answer as JSON", false)
    .action((id: string, step: string, options: DecideOptions) => decide(id, step, 'approve', options));
}

/** `reelflow reject <pipeline> <step> --reason <text>`. */
export function registerRejectCommand(program: Command): void {
  program
    .command('reject')
    .description(
      `Reject an approval gate waiting for a person: the pipeline ends rejected, nothing after it starts ${EXITS}`,
    )
    .argument('<pipeline>', 'pipeline/<name> or a bare name')
    .argument('<step>', "the gate's step id")
    .requiredOption('--reason <text>', 'why (kept with the decision, shown by status and the report)')
    .option('--by <name>', 'who rejects (default: the user running reelflow)')
    .option('--json', "print the pipeline's answer as JSON", false)
    .action((id: string, step: string, options: DecideOptions) => {
      if (!options.reason?.trim()) throw new CliError('--reason: must say why the gate is rejected', EXIT.usage);
      return decide(id, step, 'reject', options);
    });
}
