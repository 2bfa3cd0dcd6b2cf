import { z } from 'zod';
import { earlyCheckSecondsSchema, serviceIdempotencySchema, serviceUrlSchema, webhookSecretsSchema, type ServiceIdempotency } from './schemas';
import { loadTemporalSettings, TemporalConfigError, type TemporalSettings } from './temporal';
import { loadMediaSettings, MEDIA_ENV_VARIABLES, MediaConfigError, type MediaStoreSettings } from './media';

/**
 * THE module that reads and validates reelflow's environment (Temporal, the service, the bridge's
 * secrets, the task queue). Every program calls it once at start; a wrong or missing value stops it
 * with a ConfigError naming the variable, never its value (keys and secrets must not reach logs).
 * The bridge keeps its own listener settings in src/bridge/config.ts; the shared variables have the
 * same names and rules here.
 */

export type { TemporalSettings } from './temporal';
export { connectionOptions } from './temporal';
export * from './schemas';
export type { MediaStoreSettings } from './media';
export { parseDurationSeconds } from './duration';

/** A missing or invalid environment variable; `variable` names it. */
export class ConfigError extends Error {
  readonly type = 'Config';
  constructor(
    message: string,
    readonly variable: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Service base URL and API key (REELFLOW_SERVICE_URL, REELFLOW_API_KEY). */
export interface ServiceSettings {
  /** Base URL without a trailing slash. */
  url: string;
  /** Never logged. */
  apiKey: string;
  /**
   * Whether the service honours `Idempotency-Key` (REELFLOW_SERVICE_IDEMPOTENCY; default `unknown`,
   * the setting that never pays twice). See docs/submit-policy.md.
   */
  idempotency: ServiceIdempotency;
}

/** Everything reelflow reads from the environment; parts a program did not ask for are absent. */
export interface ReelflowEnv {
  temporal: TemporalSettings;
  service?: ServiceSettings;
  webhookSecrets?: string[];
  /** Where media references live (always set: the default is the local stack's file store). */
  media: MediaStoreSettings;
  /**
   * REELFLOW_EARLY_STATUS_CHECK_SECONDS: the one status check a few seconds after each submit
   * (0 = none; unset = the pipeline default, 5 s). See docs/preflight.md.
   */
  earlyStatusCheckSeconds?: number;
}

/** Which optional parts a program needs; a needed part that is missing is an error. */
export interface EnvNeeds {
  service?: boolean;
  webhookSecrets?: boolean;
}

/** Variables documented in the README's Configuration table (name → meaning), for help texts. */
export const ENV_VARIABLES = {
  TEMPORAL_ADDRESS: 'Temporal frontend host:port (default localhost:7233)',
  TEMPORAL_NAMESPACE: 'Temporal namespace (default "default")',
  TEMPORAL_API_KEY: 'Temporal Cloud API key (implies TLS)',
  TEMPORAL_TLS_CERT_PATH: 'mTLS client certificate (PEM), with TEMPORAL_TLS_KEY_PATH',
  TEMPORAL_TLS_KEY_PATH: 'mTLS client key (PEM), with TEMPORAL_TLS_CERT_PATH',
  REELFLOW_TASK_QUEUE: 'task queue of the reelflow worker (default reelflow-pipelines)',
  REELFLOW_SERVICE_URL: 'base URL of the video-generation service',
  REELFLOW_API_KEY: 'API key of the service',
  REELFLOW_SERVICE_IDEMPOTENCY: 'honoured | unknown: whether the service honours Idempotency-Key (default unknown; see docs/submit-policy.md)',
  REELFLOW_WEBHOOK_SECRETS: 'comma-separated webhook signing secrets (bridge)',
  ...MEDIA_ENV_VARIABLES,
  REELFLOW_EARLY_STATUS_CHECK_SECONDS: 'seconds after each submit of one early status check (default 5; 0 = none)',
} as const;

function present(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  // Empty strings (VAR= in a .env file) mean "not set".
  return value === undefined || value === '' ? undefined : value;
}

function parseOne<T>(schema: z.ZodType<T>, env: NodeJS.ProcessEnv, name: string, required: boolean): T | undefined {
  const value = present(env, name);
  if (value === undefined) {
    if (required) throw new ConfigError(`${name}: must be set (${ENV_VARIABLES[name as keyof typeof ENV_VARIABLES] ?? 'required'})`, name);
    return undefined;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ConfigError(`${name}: ${parsed.error.issues[0]?.message ?? 'invalid'}`, name);
  return parsed.data;
}

/**
 * Reads and validates the environment. Temporal settings are always read (defaults suit a local dev
 * server); the service and the bridge secrets only when `needs` asks, or when set (then validated).
 */
export function loadEnv(needs: EnvNeeds = {}, env: NodeJS.ProcessEnv = process.env): ReelflowEnv {
  let temporal: TemporalSettings;
  try {
    temporal = loadTemporalSettings(env);
  } catch (error) {
    if (error instanceof TemporalConfigError) throw new ConfigError(error.message, error.variable);
    throw error;
  }
  let media: MediaStoreSettings;
  try {
    media = loadMediaSettings(env);
  } catch (error) {
    if (error instanceof MediaConfigError) throw new ConfigError(error.message, error.variable);
    throw error;
  }
  const result: ReelflowEnv = { temporal, media };
  const url = parseOne(serviceUrlSchema, env, 'REELFLOW_SERVICE_URL', needs.service === true);
  const apiKey = parseOne(z.string().trim().min(1), env, 'REELFLOW_API_KEY', needs.service === true);
  const idempotency = parseOne(serviceIdempotencySchema, env, 'REELFLOW_SERVICE_IDEMPOTENCY', false) ?? 'unknown';
  if (url !== undefined && apiKey !== undefined) result.service = { url, apiKey, idempotency };
  const secrets = parseOne(webhookSecretsSchema, env, 'REELFLOW_WEBHOOK_SECRETS', needs.webhookSecrets === true);
  if (secrets !== undefined) result.webhookSecrets = secrets;
  const early = parseOne(earlyCheckSecondsSchema, env, 'REELFLOW_EARLY_STATUS_CHECK_SECONDS', false);
  if (early !== undefined) result.earlyStatusCheckSeconds = early;
  return result;
}

/** loadEnv with the service required: the settings are returned non-optional. */
export function loadEnvWithService(env: NodeJS.ProcessEnv = process.env): ReelflowEnv & { service: ServiceSettings } {
  const loaded = loadEnv({ service: true }, env);
  if (!loaded.service) throw new ConfigError('REELFLOW_SERVICE_URL: must be set', 'REELFLOW_SERVICE_URL');
  return { ...loaded, service: loaded.service };
}
