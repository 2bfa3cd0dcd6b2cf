/**
 * `reelflow --help | head`: the reader closes the pipe, the next write fails with EPIPE, and Node
 * reports an unhandled 'error' event with a stack trace. A closed output is the reader's choice, not
 * a failure: writes to it are dropped from then on and the command ends quietly. A command that runs
 * until a signal (`reelflow dev`, `worker`, `service`, `bridge`) is sent SIGTERM, so it stops the
 * way Ctrl-C stops it (its Temporal dev server included); any other command exits at once with the
 * exit code set so far (0 when none), as `reelflow run`'s Ctrl-C leaves a pipeline running.
 */

/** Installs the EPIPE handling on stdout and stderr (once per process). */
export function endQuietlyOnClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      closed(stream);
    });
  }
}

let ending = false;

function closed(stream: NodeJS.WriteStream): void {
  // Later writes (console.log included) go nowhere instead of failing again.
  stream.write = (() => true) as typeof stream.write;
  if (ending) return;
  ending = true;
  if (process.listenerCount('SIGTERM') > 0) process.kill(process.pid, 'SIGTERM');
  else process.exit(process.exitCode ?? 0);
}
