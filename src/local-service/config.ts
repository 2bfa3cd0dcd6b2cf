import { z } from 'zod';
import { RENDER_MODES, type RenderMode } from '../config/render-modes';
import { DEFAULT_FAULTS, mergeFaults, type FaultConfig } from './faults';
import { DEFAULT_QUOTE_LIMITS, type QuoteLimits } from './http/quote-limiter';
import type { ConnectionLimits } from '../net/connection-guard';

/** Options of `startLocalService`, validated at boot (a bad value stops the start with a clear error). */
export interface LocalServiceOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Where journal and output files live; created if missing. */
  dataDir: string;
  /** Keys seeded at start (stored hashed). */
  apiKeys?: string[];
  /**
   * The admin credential (`--admin-key`, REELFLOW_SERVICE_ADMIN_KEY). Only with it do the admin
   * routes (fault injection, credit grants) exist; they accept this credential and no API key.
   */
  adminKey?: string;
  /** Credits seeded into a fresh data directory (default 100000); ignored on a restart. */
  credits?: number;
  /** Relaxes only the address, scheme and port rules of webhook URLs (and input fetching) for local use. */
  allowPrivateWebhooks?: boolean;
  /** Base URL clients see (status/response/cancel/file URLs); default `http://<host>:<port>`. */
  publicUrl?: string;
  faults?: Partial<FaultConfig>;
  /** Jobs running at once per model (default 2). */
  concurrencyPerModel?: number;
  /** Shorthand for `faults.failEventsEnabled`. */
  emitFailureEvents?: boolean;
  /** Grace period of a rotated secret, in seconds (default 86400). */
  secretGraceSeconds?: number;
  /** false (default) or pino options. */
  logger?: false | Record<string, unknown>;
  /**
   * `ffmpeg` (default): every job is rendered. `stub`: a benchmarking aid — jobs complete with a
   * pre-rendered fixture of the right kind after `stubHoldMs` (see media/stub-runner.ts).
   */
  render?: RenderMode;
  /** Stub mode: how long each render takes, in ms (default 0). */
  stubHoldMs?: number;
  /** Stub mode: where pre-rendered fixtures are kept (default `<dataDir>/stub-fixtures`). */
  stubFixturesDir?: string;
  /** Quote admission: per-key rate and burst, service-wide concurrency (defaults 120/min, 30, 4). */
  quoteLimits?: Partial<QuoteLimits>;
  /** Journal size that triggers a compaction at least (default 8 MiB); tests use small values. */
  compactAtBytes?: number;
  /** Time limits and caps of the listener's connections (REELFLOW_SERVICE_*_TIMEOUT_MS, *_MAX_CONNECTIONS*). */
  connections?: Partial<ConnectionLimits>;
}

const optionsSchema = z.object({
  port: z.number().int().min(0).max(65_535).default(0),
  host: z.string().min(1).default('127.0.0.1'),
  dataDir: z.string().min(1),
  apiKeys: z
    .array(
      z.string().min(8, 'an API key needs at least 8 characters').regex(/^\S+$/, 'an API key cannot contain spaces'),
    )
    .default([]),
  adminKey: z
    .string()
    .min(16, 'the admin key needs at least 16 characters')
    .regex(/^\S+$/, 'the admin key cannot contain spaces')
    .optional(),
  credits: z.number().int().min(0).default(100_000),
  allowPrivateWebhooks: z.boolean().default(false),
  publicUrl: z
    .url()
    .refine((u) => /^https?:\/\//.test(u), 'must be an http(s) URL')
    .optional(),
  faults: z.record(z.string(), z.unknown()).default({}),
  concurrencyPerModel: z.number().int().min(1).max(64).default(2),
  emitFailureEvents: z.boolean().optional(),
  secretGraceSeconds: z.number().int().min(0).default(86_400),
  logger: z.union([z.literal(false), z.record(z.string(), z.unknown())]).default(false),
  render: z.enum(RENDER_MODES).default('ffmpeg'),
  stubHoldMs: z.number().int().min(0).max(86_400_000).default(0),
  stubFixturesDir: z.string().min(1).optional(),
  quoteLimits: z
    .strictObject({
      perMinute: z.number().positive().optional(),
      burst: z.number().int().min(1).optional(),
      concurrency: z.number().int().min(1).optional(),
    })
    .default({}),
  compactAtBytes: z.number().int().min(1024).optional(),
  connections: z
    .strictObject({
      headersTimeoutMs: z.number().int().min(1).optional(),
      requestTimeoutMs: z.number().int().min(1).optional(),
      idleTimeoutMs: z.number().int().min(1).optional(),
      maxConnections: z.number().int().min(1).optional(),
      maxConnectionsPerAddress: z.number().int().min(1).optional(),
    })
    .default({}),
});

export type ResolvedOptions = Omit<z.infer<typeof optionsSchema>, 'faults' | 'quoteLimits'> & {
  faults: FaultConfig;
  quoteLimits: QuoteLimits;
};

/** Validates options, throwing one readable error that lists every bad field. */
export function resolveOptions(options: LocalServiceOptions): ResolvedOptions {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`invalid local service options:\n${lines.join('\n')}`);
  }
  const value = parsed.data;
  if (value.adminKey !== undefined && value.apiKeys.includes(value.adminKey)) {
    throw new Error(
      'invalid local service options:\nadminKey: must differ from every API key (it is a separate credential)',
    );
  }
  let faults = mergeFaults(DEFAULT_FAULTS, value.faults);
  if (value.emitFailureEvents !== undefined) faults = { ...faults, failEventsEnabled: value.emitFailureEvents };
  const quoteLimits: QuoteLimits = {
    ...DEFAULT_QUOTE_LIMITS,
    ...Object.fromEntries(Object.entries(value.quoteLimits).filter(([, v]) => v !== undefined)),
  };
  return { ...value, faults, quoteLimits, publicUrl: value.publicUrl?.replace(/\/+$/, '') };
}
