import { z } from 'zod';
import { nonBlankSchema, temporalAddressSchema, webhookSecretsSchema } from '../config/schemas';
import { TASK_QUEUES } from '../contract/workflow-names';
import { BridgeConfigError } from './errors';

/**
 * Bridge configuration from the environment, validated once at boot: a missing or wrong value stops the
 * process with a message naming the variable (never its value: secrets must not reach logs).
 */

export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
export const DEFAULT_WEBHOOK_PATH = '/webhooks';
/** Well under the service's 10 s handler budget, leaving room for the HTTP round trip. */
export const DEFAULT_SIGNAL_TIMEOUT_MS = 5_000;

const intFromText = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const envSchema = z.object({
  // The variables shared with the CLI and the worker are validated by the same rules (src/config).
  REELFLOW_WEBHOOK_SECRETS: webhookSecretsSchema,
  TEMPORAL_ADDRESS: temporalAddressSchema.default('localhost:7233'),
  TEMPORAL_NAMESPACE: nonBlankSchema.default('default'),
  /** Temporal Cloud API key; when set the connection uses TLS. */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  REELFLOW_BRIDGE_HOST: z.string().trim().min(1).default('127.0.0.1'),
  REELFLOW_BRIDGE_PORT: intFromText(0, 65535).default(8787),
  REELFLOW_BRIDGE_PATH: z.string().trim().regex(/^\/[^\s?#]*$/, 'must be an absolute path like /webhooks').default(DEFAULT_WEBHOOK_PATH),
  REELFLOW_BRIDGE_BODY_LIMIT: intFromText(1, 64 * 1024 * 1024).default(DEFAULT_BODY_LIMIT_BYTES),
  REELFLOW_BRIDGE_TASK_QUEUE: z.string().trim().min(1).default(TASK_QUEUES.pipelines),
  REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS: intFromText(100, 9_000).default(DEFAULT_SIGNAL_TIMEOUT_MS),
  REELFLOW_RENDEZVOUS_TTL_SECONDS: intFromText(1, 30 * 24 * 3600).optional(),
  REELFLOW_RENDEZVOUS_GRACE_SECONDS: intFromText(0, 24 * 3600).optional(),
  REELFLOW_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** Validated bridge configuration. */
export interface BridgeConfig {
  secrets: string[];
  temporal: { address: string; namespace: string; apiKey?: string };
  host: string;
  port: number;
  path: string;
  bodyLimit: number;
  taskQueue: string;
  signalTimeoutMs: number;
  rendezvous: { ttlMs?: number; graceMs?: number };
  logLevel: string;
}

/** Reads and validates the bridge settings; throws BridgeConfigError naming every bad variable. */
export function loadBridgeConfig(env: NodeJS.ProcessEnv = process.env): BridgeConfig {
  // Empty strings count as unset, so `FOO= reelflow bridge` falls back to the default.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const variables = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? '')))];
    const lines = parsed.error.issues.map((issue) => `${String(issue.path[0] ?? '')}: ${issue.message}`);
    throw new BridgeConfigError(variables, `invalid bridge configuration: ${[...new Set(lines)].join('; ')}`);
  }
  const e = parsed.data;
  return {
    secrets: e.REELFLOW_WEBHOOK_SECRETS,
    temporal: { address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE, ...(e.TEMPORAL_API_KEY ? { apiKey: e.TEMPORAL_API_KEY } : {}) },
    host: e.REELFLOW_BRIDGE_HOST,
    port: e.REELFLOW_BRIDGE_PORT,
    path: e.REELFLOW_BRIDGE_PATH,
    bodyLimit: e.REELFLOW_BRIDGE_BODY_LIMIT,
    taskQueue: e.REELFLOW_BRIDGE_TASK_QUEUE,
    signalTimeoutMs: e.REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS,
    rendezvous: {
      ...(e.REELFLOW_RENDEZVOUS_TTL_SECONDS !== undefined ? { ttlMs: e.REELFLOW_RENDEZVOUS_TTL_SECONDS * 1000 } : {}),
      ...(e.REELFLOW_RENDEZVOUS_GRACE_SECONDS !== undefined ? { graceMs: e.REELFLOW_RENDEZVOUS_GRACE_SECONDS * 1000 } : {}),
    },
    logLevel: e.REELFLOW_LOG_LEVEL,
  };
}
