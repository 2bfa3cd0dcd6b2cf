import { readFileSync } from 'node:fs';
import { ConfigError } from './errors';
import { readVariables, type Env } from './read';

/**
 * Temporal connection settings. A local dev server needs nothing; Temporal Cloud needs
 * TEMPORAL_ADDRESS + TEMPORAL_NAMESPACE and either TEMPORAL_API_KEY or an mTLS pair.
 */
export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** API key for Temporal Cloud (implies TLS). Never logged. */
  apiKey?: string;
  /** mTLS client certificate and key, PEM. */
  tls?: { certPath: string; keyPath: string };
}

/** The Temporal variables every Temporal client (CLI, worker) reads. */
export const TEMPORAL_VARIABLE_NAMES = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS_CERT_PATH',
  'TEMPORAL_TLS_KEY_PATH',
  'REELFLOW_TASK_QUEUE',
] as const;

/** Reads and validates the settings; throws ConfigError naming the variable at fault. */
export function loadTemporalSettings(env: Env = process.env): TemporalSettings {
  const e = readVariables(TEMPORAL_VARIABLE_NAMES, env);
  if ((e.TEMPORAL_TLS_CERT_PATH === undefined) !== (e.TEMPORAL_TLS_KEY_PATH === undefined)) {
    const missing = e.TEMPORAL_TLS_CERT_PATH === undefined ? 'TEMPORAL_TLS_CERT_PATH' : 'TEMPORAL_TLS_KEY_PATH';
    throw ConfigError.of(missing, 'must be set together with its pair for mTLS');
  }
  return {
    address: e.TEMPORAL_ADDRESS,
    namespace: e.TEMPORAL_NAMESPACE,
    taskQueue: e.REELFLOW_TASK_QUEUE,
    ...(e.TEMPORAL_API_KEY ? { apiKey: e.TEMPORAL_API_KEY } : {}),
    ...(e.TEMPORAL_TLS_CERT_PATH && e.TEMPORAL_TLS_KEY_PATH
      ? { tls: { certPath: e.TEMPORAL_TLS_CERT_PATH, keyPath: e.TEMPORAL_TLS_KEY_PATH } }
      : {}),
  };
}

function readPem(variable: 'TEMPORAL_TLS_CERT_PATH' | 'TEMPORAL_TLS_KEY_PATH', path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw ConfigError.of(variable, `cannot read ${path} (${(error as Error).message})`);
  }
}

/** Connection options shared by `Connection.connect` (client) and `NativeConnection.connect` (worker). */
export function connectionOptions(settings: TemporalSettings): {
  address: string;
  apiKey?: string;
  tls?: boolean | { clientCertPair: { crt: Buffer; key: Buffer } };
} {
  if (settings.tls) {
    const crt = readPem('TEMPORAL_TLS_CERT_PATH', settings.tls.certPath);
    const key = readPem('TEMPORAL_TLS_KEY_PATH', settings.tls.keyPath);
    return {
      address: settings.address,
      tls: { clientCertPair: { crt, key } },
      ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    };
  }
  return settings.apiKey
    ? { address: settings.address, apiKey: settings.apiKey, tls: true }
    : { address: settings.address };
}
