/** Exit codes scripts can rely on (documented in the README's CLI section). */
export const EXIT = {
  ok: 0,
  /** The pipeline or batch failed or was cancelled; any other runtime error. */
  failed: 1,
  /** Usage error, invalid spec or manifest, invalid configuration. */
  usage: 2,
  /** Temporal or the service cannot be reached. */
  unavailable: 3,
  /** No workflow with that id. */
  notFound: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
