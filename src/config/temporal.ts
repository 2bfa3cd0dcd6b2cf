import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { TASK_QUEUES } from '../contract/workflow-names';
import { nonBlankSchema, temporalAddressSchema } from './schemas';

/**
 * Temporal connection settings from the environment. A local dev server needs nothing; Temporal
 * Cloud needs TEMPORAL_ADDRESS + TEMPORAL_NAMESPACE and either TEMPORAL_API_KEY or an mTLS pair.
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

const envSchema = z.object({
  TEMPORAL_ADDRESS: temporalAddressSchema.default('localhost:7233'),
  TEMPORAL_NAMESPACE: nonBlankSchema.default('default'),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  TEMPORAL_TLS_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().min(1).optional(),
  REELFLOW_TASK_QUEUE: z.string().min(1).default(TASK_QUEUES.pipelines),
});

/** Invalid Temporal settings; the message names the environment variable. */
export class TemporalConfigError extends Error {
  readonly type = 'TemporalConfig';
  constructor(
    message: string,
    readonly variable: string,
  ) {
    super(message);
    this.name = 'TemporalConfigError';
  }
}

/** Reads and validates the settings; throws TemporalConfigError naming the variable at fault. */
export function loadTemporalSettings(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  // Empty strings (VAR= in a .env file) mean "not set".
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    throw new TemporalConfigError(`${variable}: ${issue?.message ?? 'invalid'}`, variable);
  }
  const e = parsed.data;
  if ((e.TEMPORAL_TLS_CERT_PATH === undefined) !== (e.TEMPORAL_TLS_KEY_PATH === undefined)) {
    const missing = e.TEMPORAL_TLS_CERT_PATH === undefined ? 'TEMPORAL_TLS_CERT_PATH' : 'TEMPORAL_TLS_KEY_PATH';
    throw new TemporalConfigError(`${missing}: must be set together with its pair for mTLS`, missing);
  }
  return {
    address: e.TEMPORAL_ADDRESS,
    namespace: e.TEMPORAL_NAMESPACE,
    taskQueue: e.REELFLOW_TASK_QUEUE,
    ...(e.TEMPORAL_API_KEY ? { apiKey: e.TEMPORAL_API_KEY } : {}),
    ...(e.TEMPORAL_TLS_CERT_PATH && e.TEMPORAL_TLS_KEY_PATH ? { tls: { certPath: e.TEMPORAL_TLS_CERT_PATH, keyPath: e.TEMPORAL_TLS_KEY_PATH } } : {}),
  };
}

/** Connection options shared by `Connection.connect` (client) and `NativeConnection.connect` (worker). */
export function connectionOptions(settings: TemporalSettings): {
  address: string;
  apiKey?: string;
  tls?: boolean | { clientCertPair: { crt: Buffer; key: Buffer } };
} {
  if (settings.tls) {
    let crt: Buffer;
    let key: Buffer;
    try {
      crt = readFileSync(settings.tls.certPath);
    } catch (error) {
      throw new TemporalConfigError(`TEMPORAL_TLS_CERT_PATH: cannot read ${settings.tls.certPath} (${(error as Error).message})`, 'TEMPORAL_TLS_CERT_PATH');
    }
    try {
      key = readFileSync(settings.tls.keyPath);
    } catch (error) {
      throw new TemporalConfigError(`TEMPORAL_TLS_KEY_PATH: cannot read ${settings.tls.keyPath} (${(error as Error).message})`, 'TEMPORAL_TLS_KEY_PATH');
    }
    return { address: settings.address, tls: { clientCertPair: { crt, key } }, ...(settings.apiKey ? { apiKey: settings.apiKey } : {}) };
  }
  return settings.apiKey ? { address: settings.address, apiKey: settings.apiKey, tls: true } : { address: settings.address };
}
