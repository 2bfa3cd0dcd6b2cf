/**
 * How every long-running reelflow process ends: on SIGINT or SIGTERM (or when `until` settles, e.g. the
 * worker of `reelflow dev` stopping on its own), `stop` runs once and the reason is returned.
 * A second signal while stopping is ignored here: stopping is already under way.
 */
export async function runUntilSignal(options: { stop: () => Promise<void>; until?: Promise<string> }): Promise<string> {
  const reason = await new Promise<string>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    options.until?.then(resolve, (error: unknown) =>
      resolve(`failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  });
  await options.stop();
  return reason;
}

/**
 * Process entry points that run until a signal: `stop` closes the process's servers; the process
 * exits 0 when that worked and 1 when closing failed (named on stderr).
 */
export function exitOnSignal(name: string, stop: () => Promise<void>): void {
  let failed = false;
  runUntilSignal({
    stop: () =>
      stop().catch((error: unknown) => {
        failed = true;
        console.error(`${name}: error while stopping: ${error instanceof Error ? error.message : String(error)}`);
      }),
  }).then(
    () => process.exit(failed ? 1 : 0),
    () => process.exit(1),
  );
}
