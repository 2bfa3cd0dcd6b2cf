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
  /**
   * The service lacks an extension of the local service the command relies on (the account ledger):
   * what could be done without it was done, and the message says what to do instead.
   */
  extensionMissing: 5,
  /** `reelflow doctor`: at least one check failed or could not run (each is printed with its fix). */
  checksFailed: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
