import type { ServiceClient } from '../client/types';

/** Seconds before an ambiguous submit began from which a charge may be its job (clock skew, queueing). */
const CANDIDATE_SLACK_SECONDS = 10;

/**
 * Candidate orphans of an ambiguous submit: request ids the account ledger charged from shortly
 * before `sinceIso` on, minus those in `exclude` (the pipeline's own). Other pipelines' jobs may be
 * among them; `reelflow orphans` does the full comparison against every pipeline's claims.
 */
export async function candidateOrphans(
  client: ServiceClient,
  sinceIso: string,
  exclude: readonly string[],
): Promise<string[]> {
  const since = Date.parse(sinceIso) - CANDIDATE_SLACK_SECONDS * 1000;
  const own = new Set(exclude);
  const ledger = await client.ledger();
  // A service without the ledger extension names no candidates: the operator decides from the key alone.
  if (!ledger) return [];
  const found: string[] = [];
  for (const entry of ledger.entries) {
    if (!entry.request_id || entry.amount >= 0 || own.has(entry.request_id) || found.includes(entry.request_id))
      continue;
    if (Date.parse(entry.at) >= since) found.push(entry.request_id);
  }
  // The update's adopt takes one of these; a long list helps no one.
  return found.slice(-20);
}
