import { createServiceClient } from '../../client/service-client';
import { ServiceProblemError, ServiceTimeoutError, ServiceUnreachableError } from '../../client/errors';
import type { ServiceClient } from '../../client/types';
import type { ServiceSettings } from '../../config';
import { CliError } from './errors';
import { EXIT } from './exit';

/** A service client for one CLI command (closed by the caller). */
export function cliServiceClient(settings: ServiceSettings): ServiceClient & { close(): Promise<void> } {
  // One quick retry: a person is waiting, and a down service should say so promptly.
  const retry = { maxAttempts: 2, initialDelayMs: 200, maxDelayMs: 500 };
  return createServiceClient({
    baseUrl: settings.url,
    apiKey: settings.apiKey,
    timeoutMs: 60_000,
    retry,
    submitRetry: retry,
    idempotency: settings.idempotency,
    authScheme: settings.authScheme,
    cancelMethod: settings.cancelMethod,
  });
}

/** Turns a client error into a message a person can act on, with the CLI's exit code. */
export function serviceCliError(error: unknown, settings: ServiceSettings, what: string): CliError | unknown {
  if (error instanceof ServiceUnreachableError || error instanceof ServiceTimeoutError) {
    return new CliError(
      `${what}: ${error.message}\nStart a local one with \`reelflow dev\` or \`reelflow service\`, or set REELFLOW_SERVICE_URL.`,
      EXIT.unavailable,
    );
  }
  if (error instanceof ServiceProblemError) {
    if (error.status === 401 || error.status === 403) {
      return new CliError(
        `the service at ${settings.url} refused REELFLOW_API_KEY (${error.code}): ${error.message}`,
        EXIT.usage,
      );
    }
    if (error.code === 'insufficient_credits' || error.status === 402) {
      return new CliError(
        `insufficient credits (${what}): ${error.message}; top up the account and try again`,
        EXIT.failed,
      );
    }
    const fields = error.fieldErrors.map((e) => `\n  ${e.path}: ${e.message}`).join('');
    return new CliError(
      `the service refused ${what} (${error.code}): ${error.message}${fields}`,
      error.status === 422 || error.status === 400 ? EXIT.usage : EXIT.failed,
    );
  }
  return error;
}
