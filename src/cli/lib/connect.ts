import { Client, Connection } from '@temporalio/client';
import {
  connectionOptions,
  describeTemporalConnection,
  loadTracingSettings,
  type TemporalSettings,
} from '../../config';
import { activeTracing, startTracing, stopTracing, tracingClientInterceptors } from '../../tracing';
import { CliError } from './errors';
import { EXIT } from './exit';

/** How long the CLI waits for Temporal before saying it is unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;

/** A Temporal client for the CLI plus the connection to close. */
export interface CliTemporal {
  client: Client;
  settings: TemporalSettings;
  close(): Promise<void>;
}

/**
 * Connects to Temporal; an unreachable server becomes a CliError (exit 3) naming the address and what
 * to start, instead of a gRPC stack trace.
 */
export async function connectTemporal(settings: TemporalSettings): Promise<CliTemporal> {
  // An unreadable mTLS file is a ConfigError naming its variable (exit 2).
  const options = connectionOptions(settings);
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...options, connectTimeout: CONNECT_TIMEOUT_MS });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new CliError(
      `cannot reach Temporal at ${describeTemporalConnection(settings)}: ${reason}\n` +
        'Start a local one with `reelflow dev`, or set TEMPORAL_ADDRESS (and TEMPORAL_TLS_* or TEMPORAL_API_KEY) to your cluster.',
      EXIT.unavailable,
    );
  }
  // Tracing (OTEL_EXPORTER_OTLP_*): the CLI's starts and signals begin the pipelines' traces.
  const tracingSettings = activeTracing() ? undefined : loadTracingSettings('cli');
  if (tracingSettings) startTracing(tracingSettings);
  const client = new Client({ connection, namespace: settings.namespace, interceptors: tracingClientInterceptors() });
  return {
    client,
    settings,
    close: async () => {
      await connection.close();
      // The spans of this command are exported before it exits.
      if (tracingSettings) await stopTracing();
    },
  };
}
