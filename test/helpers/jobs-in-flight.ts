/**
 * Most jobs in flight at once, from the service's own records: each job counts from its creation
 * (`submittedAt`) until it became terminal (`completedAt`; still open if null). Computed from the
 * records, not by sampling, so a bound checked with it cannot be missed between two samples.
 */
export function maxJobsInFlight(jobs: readonly { submittedAt: number; completedAt: number | null }[]): number {
  // At equal times the end counts first: a job that ended as another was created did not overlap it.
  const edges = jobs.flatMap((j) => [
    { at: j.submittedAt, delta: 1 },
    { at: j.completedAt ?? Infinity, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let max = 0;
  for (const edge of edges) max = Math.max(max, (now += edge.delta));
  return max;
}
