import type { Client } from '@temporalio/client';
import type { AccountLedger } from '../../contract';
import type { ServiceClient } from '../../client/types';
import { SEARCH_ATTRIBUTES, WORKFLOW_TYPES } from '../../workflows/definitions';
import {
  RECOVERY_MEMO_KEY,
  type AbandonedJob,
  type AmbiguousSubmit,
  type RecoveryMemo,
} from '../../workflows/recovery-types';

/** What one pipeline claims: the request ids it recorded, and what it abandoned or could not learn. */
export interface PipelineClaims {
  workflowId: string;
  requestIds: string[];
  abandoned: AbandonedJob[];
  ambiguous: AmbiguousSubmit[];
}

/** A charged job no pipeline claims (or one a pipeline recorded as abandoned). */
export interface OrphanJob {
  request_id: string;
  state: string;
  credits_charged: number;
  credits_refunded: number;
  credits_net: number;
  charged_at: string;
  outputs: string[];
  /** Set when a pipeline recorded the job as abandoned. */
  abandoned_by?: { workflow_id: string; step: string; reason: string };
  /** Set when an ambiguous step's key resolves to this job (local-service lookup). */
  idempotency_key?: string;
  /** Why state or outputs could not be read. */
  error?: string;
}

/** An ambiguous submit still waiting, or given up, with what the service knows of its key. */
export interface UnresolvedAmbiguous {
  workflow_id: string;
  step: string;
  idempotency_key: string;
  state: AmbiguousSubmit['state'];
  since: string;
  /** From the key lookup (local extension); null when the service cannot look keys up. */
  request_id: string | null;
}

/** `reelflow orphans --json`. */
export interface OrphanReport {
  /**
   * False when the service has no account ledger (a local-service extension): charged jobs no
   * pipeline claims cannot be found; the report then holds only what pipelines recorded themselves
   * (jobs they abandoned, submits still ambiguous).
   */
  ledger_available: boolean;
  since: string;
  checked_at: string;
  pipelines_checked: number;
  /** Distinct request ids charged in the window. */
  charged_jobs: number;
  claimed_jobs: number;
  orphans: OrphanJob[];
  /** Net credits of the orphans (charged − refunded). */
  orphaned_credits: number;
  ambiguous: UnresolvedAmbiguous[];
}

/** Credits per request id from ledger entries at or after `since`. */
export function chargedJobs(
  ledger: AccountLedger,
  since: Date,
): Map<string, { charged: number; refunded: number; chargedAt: string }> {
  const jobs = new Map<string, { charged: number; refunded: number; chargedAt: string }>();
  for (const entry of ledger.entries) {
    if (!entry.request_id) continue;
    const at = Date.parse(entry.at);
    if (Number.isNaN(at) || at < since.getTime()) continue;
    const job = jobs.get(entry.request_id) ?? { charged: 0, refunded: 0, chargedAt: entry.at };
    if (entry.amount < 0) job.charged += -entry.amount;
    else job.refunded += entry.amount;
    jobs.set(entry.request_id, job);
  }
  return jobs;
}

/**
 * Pipelines that may have claimed a job charged since `since`: running ones and those closed since
 * (a job is charged before its pipeline closes). Request ids come from the search attribute, or the
 * memo summary on namespaces without it; `recovery` from the memo.
 */
export async function listPipelineClaims(client: Client, since: Date): Promise<PipelineClaims[]> {
  const query = `WorkflowType = '${WORKFLOW_TYPES.pipeline}' AND (ExecutionStatus = 'Running' OR CloseTime >= '${since.toISOString()}')`;
  const claims: PipelineClaims[] = [];
  for await (const execution of client.workflow.list({ query })) {
    const memo = (execution.memo ?? {}) as { summary?: { steps?: Array<{ requestIds?: string[] }> } } & Partial<
      Record<typeof RECOVERY_MEMO_KEY, RecoveryMemo>
    >;
    const fromAttribute = execution.typedSearchAttributes.get(SEARCH_ATTRIBUTES.requestIds) ?? [];
    const fromMemo = memo.summary?.steps?.flatMap((s) => s.requestIds ?? []) ?? [];
    const recovery = memo[RECOVERY_MEMO_KEY];
    claims.push({
      workflowId: execution.workflowId,
      requestIds: [...new Set([...fromAttribute, ...fromMemo])],
      abandoned: recovery?.abandoned ?? [],
      ambiguous: recovery?.ambiguous ?? [],
    });
  }
  return claims;
}

/**
 * Compares the ledger with the pipelines' claims: every charged job no pipeline claims, and every
 * job a pipeline recorded as abandoned, with its state, credits and outputs read from the service.
 */
export async function findOrphans(
  service: ServiceClient,
  claims: PipelineClaims[],
  since: Date,
  now: Date = new Date(),
): Promise<OrphanReport> {
  const ledger = await service.ledger();
  const abandoned = new Map<string, { workflow_id: string; step: string; reason: string }>();
  for (const pipeline of claims) {
    for (const a of pipeline.abandoned)
      if (a.requestId) abandoned.set(a.requestId, { workflow_id: pipeline.workflowId, step: a.step, reason: a.reason });
  }
  const claimed = new Set(claims.flatMap((c) => c.requestIds).filter((id) => !abandoned.has(id)));
  // Without a ledger, the jobs pipelines abandoned are still known (their credits are not).
  const charged = ledger
    ? chargedJobs(ledger, since)
    : new Map([...abandoned.keys()].map((id) => [id, { charged: 0, refunded: 0, chargedAt: since.toISOString() }]));

  const ambiguous: UnresolvedAmbiguous[] = [];
  const keyOf = new Map<string, string>();
  for (const pipeline of claims) {
    for (const a of pipeline.ambiguous) {
      if (a.state === 'adopted' || a.state === 'resubmitted') continue;
      const found = await service.lookupKey(a.idempotencyKey).catch(() => null);
      const requestId = found?.requests[0]?.request_id ?? null;
      if (requestId) keyOf.set(requestId, a.idempotencyKey);
      ambiguous.push({
        workflow_id: pipeline.workflowId,
        step: a.step,
        idempotency_key: a.idempotencyKey,
        state: a.state,
        since: a.since,
        request_id: requestId,
      });
    }
  }

  const orphans: OrphanJob[] = [];
  for (const [requestId, credits] of charged) {
    if (claimed.has(requestId)) continue;
    const orphan: OrphanJob = {
      request_id: requestId,
      state: 'UNKNOWN',
      credits_charged: credits.charged,
      credits_refunded: credits.refunded,
      credits_net: credits.charged - credits.refunded,
      charged_at: credits.chargedAt,
      outputs: [],
      ...(abandoned.has(requestId) ? { abandoned_by: abandoned.get(requestId)! } : {}),
      ...(keyOf.has(requestId) ? { idempotency_key: keyOf.get(requestId)! } : {}),
    };
    try {
      orphan.state = (await service.status(requestId)).status;
      if (orphan.state === 'COMPLETED') orphan.outputs = (await service.result(requestId)).videos.map((v) => v.url);
    } catch (error) {
      orphan.error = error instanceof Error ? error.message : String(error);
    }
    orphans.push(orphan);
  }
  orphans.sort((a, b) => a.charged_at.localeCompare(b.charged_at));
  return {
    ledger_available: ledger !== null,
    since: since.toISOString(),
    checked_at: now.toISOString(),
    pipelines_checked: claims.length,
    charged_jobs: ledger ? charged.size : 0,
    claimed_jobs: [...charged.keys()].filter((id) => claimed.has(id)).length,
    orphans,
    orphaned_credits: orphans.reduce((sum, o) => sum + o.credits_net, 0),
    ambiguous,
  };
}

/** Parses `--since` (`90m`, `24h`, `7d`, `30s`) into milliseconds; null when malformed. */
export function parseSince(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/.exec(text.trim());
  if (!match) return null;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  const ms = Number(match[1]) * unit;
  return ms > 0 ? ms : null;
}

/** The report as lines for a person. */
export function orphanLines(report: OrphanReport): string[] {
  const lines = [
    report.ledger_available
      ? `orphans since ${report.since}: ${report.orphans.length} job(s), ${report.orphaned_credits} credit(s) net ` +
        `(${report.charged_jobs} charged job(s) in the ledger, ${report.claimed_jobs} claimed by ${report.pipelines_checked} pipeline(s))`
      : `jobs ${report.pipelines_checked} pipeline(s) abandoned since ${report.since}: ${report.orphans.length} (no ledger: credits unknown, unclaimed charges not checked)`,
  ];
  for (const o of report.orphans) {
    const why = o.abandoned_by
      ? `abandoned by ${o.abandoned_by.workflow_id} step ${o.abandoned_by.step}: ${o.abandoned_by.reason}`
      : o.idempotency_key
        ? `Idempotency-Key ${o.idempotency_key}`
        : 'claimed by no pipeline';
    lines.push(
      `  ${o.request_id}  ${o.state.padEnd(11)} ${String(o.credits_net).padStart(5)} credits (charged ${o.credits_charged}, refunded ${o.credits_refunded})  ${o.charged_at}  ${why}`,
    );
    for (const url of o.outputs) lines.push(`      output ${url}`);
    if (o.error) lines.push(`      could not read its state: ${o.error}`);
  }
  if (report.ambiguous.length) {
    lines.push(`ambiguous submits not resolved: ${report.ambiguous.length}`);
    for (const a of report.ambiguous) {
      lines.push(
        `  ${a.workflow_id} step ${a.step} (${a.state} since ${a.since}) Idempotency-Key ${a.idempotency_key} → ${a.request_id ?? 'no job found by key (or the service cannot look keys up)'}`,
      );
    }
  }
  return lines;
}
