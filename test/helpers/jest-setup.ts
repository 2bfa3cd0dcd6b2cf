import { DefaultLogger, Runtime } from '@temporalio/worker';

// Worker state changes at INFO drown test output; keep warnings and errors.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // Already installed by an earlier test file in this process.
}
