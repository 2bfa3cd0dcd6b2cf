import { z } from 'zod';
import { TASK_QUEUES } from '../contract';
import { RENDER_MODES } from './render-modes';
import { parseRouteStoreLocation } from './route-store-location';
import { otlpHeadersSchema, otlpUrlSchema } from './otlp';
import {
  booleanTextSchema,
  buildIdSchema,
  deploymentNameSchema,
  earlyCheckSecondsSchema,
  logLevelSchema,
  nonBlankSchema,
  portTextSchema,
  serviceIdempotencySchema,
  clientAuthSchemeSchema,
  clientCancelMethodSchema,
  webhookUrlSchema,
  serviceUrlSchema,
  temporalAddressSchema,
  webhookSecretsSchema,
  wholeNumberText,
  modelCapsSchema,
} from './schemas';
import { MODEL_IDS } from '../contract';

/**
 * Every environment variable reelflow reads, each declared once: how its text is parsed, what the
 * table in docs/configuration.md says about it (generated from here by `npm run docs:config`), and
 * its default. Which process reads which variable is declared in ./processes.ts.
 *
 * The one rule for empty values: a variable that is unset, empty or only whitespace counts as unset
 * (its default applies, or "must be set" when the process requires it); a set value is trimmed
 * before it is parsed. Flags that stand for a variable follow the same rules and win over it.
 */
export interface VariableSpec {
  /** Parses the trimmed text (called only when set); `.default()` gives the unset value, else `.optional()`. */
  schema: z.ZodType;
  /** Allowed values, as the table shows them. */
  type: string;
  /** The default as the table shows it, when the loader computes it (otherwise the schema's default is shown). */
  defaultText?: string;
  /** What it does (one sentence or two; the table's last column). */
  description: string;
  /**
   * A secret: never shown in messages or logs (none of them is ever echoed anyway), and readable from
   * the file `<NAME>_FILE` names instead (Docker and Kubernetes secrets; ./read.ts).
   */
  secret?: boolean;
}

const PATH = 'path';

/** The catalog. Keys are the variable names, exactly as set in the environment. */
export const VARIABLES = {
  // ---- Temporal (Temporal's own names: the SDKs and the `temporal` CLI read the same ones) ----
  TEMPORAL_ADDRESS: {
    schema: temporalAddressSchema.optional(),
    type: 'host:port',
    defaultText: "the profile's, else `localhost:7233`",
    description: 'Temporal frontend.',
  },
  TEMPORAL_NAMESPACE: {
    schema: nonBlankSchema.optional(),
    type: 'name',
    defaultText: "the profile's, else `default`",
    description: 'Temporal namespace.',
  },
  TEMPORAL_API_KEY: {
    schema: z.string().optional(),
    type: 'secret',
    description: 'Temporal API key (Temporal Cloud); turns TLS on.',
    secret: true,
  },
  TEMPORAL_TLS: {
    schema: booleanTextSchema.optional(),
    type: 'boolean',
    defaultText: 'on with an API key or any `TEMPORAL_TLS_*` setting',
    description: 'TLS to the frontend without further settings (`true`), or off although a profile sets TLS (`false`).',
  },
  TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: {
    schema: booleanTextSchema.optional(),
    type: 'boolean',
    defaultText: '`false`',
    description:
      "Temporal's standard name, refused when `true`: the TypeScript SDK cannot skip the host check; set `TEMPORAL_TLS_SERVER_NAME` or the server CA instead.",
  },
  TEMPORAL_TLS_CLIENT_CERT_PATH: {
    schema: z.string().optional(),
    type: PATH,
    description: 'mTLS client certificate (PEM); set together with `TEMPORAL_TLS_CLIENT_KEY_PATH`.',
  },
  TEMPORAL_TLS_CLIENT_KEY_PATH: {
    schema: z.string().optional(),
    type: PATH,
    description: 'mTLS client private key (PEM); set together with `TEMPORAL_TLS_CLIENT_CERT_PATH`.',
  },
  TEMPORAL_TLS_CLIENT_CERT_DATA: {
    schema: z.string().optional(),
    type: 'PEM text',
    description: 'The client certificate itself, instead of `TEMPORAL_TLS_CLIENT_CERT_PATH`.',
  },
  TEMPORAL_TLS_CLIENT_KEY_DATA: {
    schema: z.string().optional(),
    type: 'PEM text',
    description: 'The client private key itself, instead of `TEMPORAL_TLS_CLIENT_KEY_PATH`.',
    secret: true,
  },
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: {
    schema: z.string().optional(),
    type: PATH,
    defaultText: "the system's trusted CAs",
    description: "CA certificate (PEM) that signed the frontend's certificate: a self-hosted cluster's private CA.",
  },
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: {
    schema: z.string().optional(),
    type: 'PEM text',
    description: 'The server CA certificate itself, instead of `TEMPORAL_TLS_SERVER_CA_CERT_PATH`.',
  },
  TEMPORAL_TLS_SERVER_NAME: {
    schema: z.string().optional(),
    type: 'host name',
    defaultText: "the address's host",
    description: "Name the frontend's certificate must carry (SNI), when it differs from the address's host.",
  },
  TEMPORAL_PROFILE: {
    schema: nonBlankSchema.optional(),
    type: 'name',
    defaultText: '`default` (when the file has it)',
    description:
      'Profile of the Temporal config file to use; the variables above override its fields ([docs/production.md](production.md#temporal-connection)).',
  },
  TEMPORAL_CONFIG_FILE: {
    schema: z.string().optional(),
    type: PATH,
    defaultText: '`$XDG_CONFIG_HOME/temporalio/temporal.toml` (`~/.config/...`), when it exists',
    description: "Temporal's TOML config file (the `temporal` CLI's `temporal config set` writes it).",
  },
  TEMPORAL_TLS_CERT_PATH: {
    schema: z.string().optional(),
    type: PATH,
    description: 'Deprecated: read as `TEMPORAL_TLS_CLIENT_CERT_PATH`, with a warning.',
  },
  TEMPORAL_TLS_KEY_PATH: {
    schema: z.string().optional(),
    type: PATH,
    description: 'Deprecated: read as `TEMPORAL_TLS_CLIENT_KEY_PATH`, with a warning.',
  },
  REELFLOW_TASK_QUEUE: {
    schema: z.string().default(TASK_QUEUES.pipelines),
    type: 'name',
    description: 'Task queue the worker polls and the CLI starts workflows on.',
  },

  // ---- The service, as a client sees it ----
  REELFLOW_SERVICE_URL: {
    schema: serviceUrlSchema.optional(),
    type: 'http(s) URL',
    description:
      "Service base URL (the local stack's is `http://127.0.0.1:8710`). `reelflow outputs` fetches private/http URLs only from this origin.",
  },
  REELFLOW_API_KEY: {
    schema: z.string().optional(),
    type: 'secret',
    description: 'Service API key (set with `REELFLOW_SERVICE_URL`).',
    secret: true,
  },
  REELFLOW_SERVICE_IDEMPOTENCY: {
    schema: serviceIdempotencySchema.default('unknown'),
    type: '`honoured` | `unknown`',
    description:
      '`honoured` when the service returns the original job for a repeated `Idempotency-Key` (the local service does): an ambiguous submit is retried with the same key, the submits of pipelines run as local activities and a job waiting for a slot is submitted by the process that frees one; `unknown` waits for an operator decision ([docs/submit-policy.md](submit-policy.md)).',
  },
  REELFLOW_ACCOUNT_CONCURRENCY: {
    schema: wholeNumberText(1, 100_000).optional(),
    type: 'integer 1-100000',
    defaultText: 'no cap',
    description:
      "Jobs in flight at the service for the whole account: slots in the route store (`REELFLOW_ROUTE_STORE`), shared by every pipeline, batch and worker on that store, granted by priority and fair share; set the same value on every worker and bridge (a bridge frees a finished job's slot at its webhook and, with the account's key, submits the next waiting job) ([docs/decisions/account-slots.md](decisions/account-slots.md)). A batch's `--concurrency` sits under it.",
  },
  REELFLOW_MODEL_CONCURRENCY: {
    schema: modelCapsSchema(MODEL_IDS).optional(),
    type: '`<model>=<n>,…`',
    defaultText: 'no cap per model',
    description:
      'Jobs in flight at the service per model, for providers that count per model (model ids as in the spec, e.g. `<model id>=2,<other model id>=4`), under `REELFLOW_ACCOUNT_CONCURRENCY`; slots in the route store like it ([docs/decisions/account-slots.md](decisions/account-slots.md)).',
  },
  REELFLOW_ACCOUNT_LIMITS_DIR: {
    schema: z.string().optional(),
    type: PATH,
    defaultText: '`<state dir>/account`',
    description:
      "Where the account's shared 429 back-off lives: a directory every worker of the account reaches. (Permits for jobs in flight moved to the route store's slots.)",
  },
  REELFLOW_CLIENT_AUTH_SCHEME: {
    schema: clientAuthSchemeSchema.default('Key'),
    type: '`Key` | `Bearer`',
    description:
      'Scheme of the `Authorization` header sent to the service; the spec accepts both for the same key (`reelflow doctor` says which one the service takes).',
  },
  REELFLOW_CLIENT_CANCEL_METHOD: {
    schema: clientCancelMethodSchema.default('POST'),
    type: '`POST` | `PUT` | `DELETE`',
    description:
      'HTTP method used on a job\'s `cancel_url` (the spec leaves it "not shown"; the local service takes POST) ([docs/spec-decisions.md](spec-decisions.md)).',
  },
  REELFLOW_WEBHOOK_URL: {
    schema: webhookUrlSchema.optional(),
    type: 'https URL',
    defaultText: "the local stack's bridge",
    description:
      'Public address of the webhook endpoint registered with the service (TLS in front of the bridge: [docs/going-live.md](going-live.md)); `reelflow doctor` checks it against the registration rules, `reelflow dev` registers it instead of its bridge address.',
  },
  REELFLOW_EARLY_STATUS_CHECK_SECONDS: {
    schema: earlyCheckSecondsSchema.optional(),
    type: 'seconds, 0-600',
    defaultText: '`5` (the pipeline default)',
    description: 'One status check this long after each submit; 0 = none ([docs/preflight.md](preflight.md)).',
  },

  // ---- Media store ----
  REELFLOW_STATE_DIR: {
    schema: z.string().optional(),
    type: PATH,
    defaultText: '`.reelflow`',
    description:
      'State directory of the local stack (`reelflow dev`, `npm run demo`); the default media store is `<state dir>/media`.',
  },
  REELFLOW_MEDIA_STORE: {
    schema: z.string().optional(),
    type: '`file://<dir>` | `s3://<bucket>/<prefix>`',
    defaultText: '`file://<state dir>/media`',
    description: 'Media store ([docs/media-store.md](media-store.md)); the CLI and every worker must use the same one.',
  },
  REELFLOW_MEDIA_S3_ENDPOINT: {
    schema: z.string().optional(),
    type: 'http(s) origin',
    defaultText: 'AWS',
    description: 'S3-compatible endpoint (MinIO, R2, ...); path-style addressing then.',
  },
  REELFLOW_MEDIA_S3_REGION: {
    schema: z.string().optional(),
    type: 'region',
    defaultText: '`AWS_REGION`, else `us-east-1`',
    description: 'S3 region.',
  },
  AWS_REGION: {
    schema: z.string().optional(),
    type: 'region',
    description: 'Fallback for `REELFLOW_MEDIA_S3_REGION` (the AWS convention).',
  },
  REELFLOW_MEDIA_S3_ACCESS_KEY_ID: {
    schema: z.string().optional(),
    type: 'string',
    defaultText: "the AWS SDK's credential chain",
    description: 'S3 access key id; set together with `REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY`.',
    // A credential: read from REELFLOW_MEDIA_S3_ACCESS_KEY_ID_FILE too, and kept out of messages.
    secret: true,
  },
  REELFLOW_MEDIA_S3_SECRET_ACCESS_KEY: {
    schema: z.string().optional(),
    type: 'secret',
    description: 'S3 secret access key.',
    secret: true,
  },
  REELFLOW_MEDIA_S3_FORCE_PATH_STYLE: {
    schema: booleanTextSchema.optional(),
    type: 'boolean',
    defaultText: 'true with an endpoint',
    description: 'Path-style S3 addressing.',
  },
  REELFLOW_MEDIA_URL_LIFETIME: {
    schema: z.string().optional(),
    type: 'duration 1s-7d (`3600`, `15m`, `2h`)',
    defaultText: '`1h`',
    description: 'Lifetime of the signed URLs handed to the service (7 days is the S3 presigning maximum).',
  },

  // ---- Tools ----
  FFMPEG_PATH: {
    schema: z.string().optional(),
    type: PATH,
    defaultText: 'the @ffmpeg-installer binary',
    description: 'ffmpeg binary.',
  },
  FFPROBE_PATH: {
    schema: z.string().optional(),
    type: PATH,
    defaultText: 'the @ffprobe-installer binary',
    description: 'ffprobe binary.',
  },
  REELFLOW_FONT_FILE: {
    schema: z.string().optional(),
    type: PATH,
    defaultText: 'a system font',
    description: 'Font for the text ffmpeg draws into generated clips.',
  },

  // ---- Logs ----
  REELFLOW_LOG_LEVEL: {
    schema: logLevelSchema.default('info'),
    type: 'fatal, error, warn, info, debug, trace, silent',
    description: 'pino level of the JSON logs.',
  },

  // ---- Worker ----
  REELFLOW_WORKFLOW_BUNDLE: {
    schema: z.string().optional(),
    type: PATH,
    defaultText: 'bundle at start',
    description: 'Workflow bundle built by `npm run build` (`dist/workflow-bundle.js`).',
  },
  REELFLOW_DEPLOYMENT_NAME: {
    schema: deploymentNameSchema.default('reelflow'),
    type: 'name (no `.` or `:`)',
    description:
      'Worker Deployment the worker belongs to (Worker Versioning: [docs/safe-deploys.md](safe-deploys.md)).',
  },
  REELFLOW_BUILD_ID: {
    schema: buildIdSchema.optional(),
    type: 'build id',
    defaultText: 'package version + workflow bundle hash',
    description:
      "The worker's version within the deployment, e.g. `0.2.0-1a2b3c4d5e6f`; pipelines finish on the version they started on.",
  },
  REELFLOW_SET_CURRENT_VERSION: {
    schema: booleanTextSchema.default(false),
    type: 'true, false',
    description:
      "The worker makes its own version current once no execution of unversioned (0.1.0) workers is open on its task queue (drain-first), even when another version is current. Unset, it does so only for the deployment's first version. For compose and dev clusters; leave unset where an operator rolls versions out.",
  },
  REELFLOW_MAX_CONCURRENT_ACTIVITIES: {
    schema: wholeNumberText(1).optional(),
    type: 'integer >= 1',
    defaultText: 'SDK default',
    description: 'Activities run at once per worker.',
  },
  REELFLOW_MAX_CONCURRENT_WORKFLOW_TASKS: {
    schema: wholeNumberText(1).optional(),
    type: 'integer >= 1',
    defaultText: 'SDK default',
    description: 'Workflow tasks run at once per worker.',
  },
  REELFLOW_MAX_CACHED_WORKFLOWS: {
    schema: wholeNumberText(1).optional(),
    type: 'integer >= 1',
    defaultText: 'SDK default',
    description: 'Sticky workflow cache size (bounds memory: docs/benchmarks.md, footprint).',
  },
  REELFLOW_SHUTDOWN_GRACE_SECONDS: {
    schema: wholeNumberText(1).optional(),
    type: 'integer >= 1',
    defaultText: 'SDK default',
    description: 'Time in-flight activities get on SIGTERM.',
  },
  REELFLOW_METRICS_PORT: {
    schema: portTextSchema.optional(),
    type: 'port 0-65535',
    defaultText: 'off',
    description: 'Serve Prometheus `/metrics` here ([docs/observability.md](observability.md)).',
  },
  REELFLOW_METRICS_HOST: {
    schema: z.string().default('127.0.0.1'),
    type: 'host',
    description: 'Address the metrics server binds.',
  },
  REELFLOW_SDK_METRICS_ADDRESS: {
    schema: z.string().optional(),
    type: 'host:port',
    defaultText: '`127.0.0.1:9464` with `REELFLOW_METRICS_PORT`',
    description: "The Temporal SDK's own Prometheus exporter, appended to `/metrics`.",
  },

  REELFLOW_WORKER_HEALTH_PORT: {
    schema: portTextSchema.optional(),
    type: 'port 0-65535',
    defaultText: 'off',
    description:
      "Serve the worker's `GET /readyz` (200 while Temporal answers and both pollers poll, else 503; JSON) and `GET /healthz` here, metrics on or not ([docs/production.md](production.md#worker-readiness)).",
  },
  REELFLOW_WORKER_HEALTH_HOST: {
    schema: z.string().default('127.0.0.1'),
    type: 'host',
    description: "Address the worker's health endpoint binds.",
  },

  // ---- Bridge ----
  REELFLOW_WEBHOOK_SECRETS: {
    schema: webhookSecretsSchema.optional(),
    type: 'comma-separated secrets',
    description: 'Webhook signing secrets (two during a rotation).',
    secret: true,
  },
  REELFLOW_BRIDGE_HOST: {
    schema: nonBlankSchema.default('127.0.0.1'),
    type: 'host',
    description: 'Address the bridge binds.',
  },
  REELFLOW_BRIDGE_PORT: {
    schema: portTextSchema.default(8787),
    type: 'port 0-65535',
    description: 'Port the bridge listens on (0 picks a free one).',
  },
  REELFLOW_BRIDGE_PATH: {
    schema: z
      .string()
      .regex(/^\/[^\s?#]*$/, 'must be an absolute path like /webhooks')
      .default('/webhooks'),
    type: 'absolute path',
    description: 'Path webhooks are posted to.',
  },
  REELFLOW_BRIDGE_BODY_LIMIT: {
    schema: wholeNumberText(1, 64 * 1024 * 1024).default(1024 * 1024),
    type: 'bytes, 1-67108864',
    description: 'Largest delivery body accepted.',
  },
  REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS: {
    schema: wholeNumberText(100, 9_000).default(5_000),
    type: 'ms, 100-9000',
    description: "How long one delivery waits for Temporal to take it; well under the service's 10 s handler budget.",
  },
  REELFLOW_BRIDGE_BACKLOG_LIMIT: {
    schema: wholeNumberText(1, 10_000_000).default(20_000),
    type: 'deliveries, 1-10000000',
    description:
      'Undelivered events the inbox holds before the bridge answers 503 with Retry-After (the service retries); [docs/decisions/bridge.md](decisions/bridge.md).',
  },
  REELFLOW_BRIDGE_REQUEST_TIMEOUT_MS: {
    schema: wholeNumberText(500, 9_000).default(5_000),
    type: 'ms, 500-9000',
    description:
      "A delivery's headers and body must arrive within this, else the connection is closed (408); under the service's 10 s sender timeout ([docs/decisions/bridge.md](decisions/bridge.md)).",
  },
  REELFLOW_BRIDGE_IDLE_TIMEOUT_MS: {
    schema: wholeNumberText(500, 9_000).default(2_000),
    type: 'ms, 500-9000',
    description: 'A connection that sends nothing for this long before or during a request is closed.',
  },
  REELFLOW_BRIDGE_MAX_CONNECTIONS: {
    schema: wholeNumberText(1, 1_000_000).optional(),
    type: 'integer >= 1',
    defaultText: '¾ of (open-files limit − 64), 16-4096',
    description:
      'Open connections at most; beyond, the oldest connection without a complete request is closed (never one being answered).',
  },
  REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS: {
    schema: wholeNumberText(1, 1_000_000).optional(),
    type: 'integer >= 1',
    defaultText: '¾ of `REELFLOW_BRIDGE_MAX_CONNECTIONS`',
    description:
      'Open connections from one client address at most (same rule); behind a proxy, set it to `REELFLOW_BRIDGE_MAX_CONNECTIONS`.',
  },
  REELFLOW_BRIDGE_METRICS_PORT: {
    schema: portTextSchema.optional(),
    type: 'port 0-65535',
    defaultText: 'off',
    description:
      "Serve the bridge's Prometheus `/metrics` on this port, its own listener (never the webhook port) ([docs/observability.md](observability.md)).",
  },
  REELFLOW_BRIDGE_METRICS_HOST: {
    schema: nonBlankSchema.default('127.0.0.1'),
    type: 'host',
    description: "Address the bridge's metrics listener binds.",
  },
  REELFLOW_ROUTE_STORE: {
    schema: z
      .string()
      .transform((text, context) => {
        try {
          return parseRouteStoreLocation(text);
        } catch (error) {
          context.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      })
      .optional(),
    type: '`sqlite:<path>[?synchronous=full]` | `postgres://…`',
    defaultText: '`sqlite:<state dir>/routes.sqlite`',
    description:
      "Route store: which workflow waits for each request, and the bridge's inbox ([docs/webhook-routing.md](webhook-routing.md)). The worker and the bridge must use the same one; PostgreSQL when they run on several machines.",
    secret: true,
  },
  REELFLOW_ROUTE_TTL_SECONDS: {
    schema: wholeNumberText(60, 30 * 24 * 3600).optional(),
    type: 'seconds, 60-2592000',
    defaultText: '`86400`',
    description:
      'How long the route store keeps deliveries nobody subscribed to (jobs reelflow did not submit) and the ids of delivered ones (deduplication).',
  },
  REELFLOW_RENDEZVOUS_TTL_SECONDS: {
    schema: wholeNumberText(60, 30 * 24 * 3600).optional(),
    type: 'seconds, 60-2592000',
    defaultText: 'unset',
    description: 'Old name of `REELFLOW_ROUTE_TTL_SECONDS`, still read (with a warning).',
  },

  // ---- Local service process ----
  REELFLOW_SERVICE_HOST: {
    schema: nonBlankSchema.default('127.0.0.1'),
    type: 'host',
    description: 'Address the local service binds (`--host`).',
  },
  REELFLOW_SERVICE_PORT: {
    schema: portTextSchema.default(0),
    type: 'port 0-65535',
    description: 'Port of the local service; 0 picks a free one (`--port`).',
  },
  REELFLOW_SERVICE_REQUEST_TIMEOUT_MS: {
    schema: wholeNumberText(1_000, 600_000).default(30_000),
    type: 'ms, 1000-600000',
    description:
      "A request's headers and body must arrive within this, else the connection is closed (408); bodies reach 50 MiB.",
  },
  REELFLOW_SERVICE_IDLE_TIMEOUT_MS: {
    schema: wholeNumberText(500, 60_000).default(5_000),
    type: 'ms, 500-60000',
    description: 'A connection that sends nothing for this long before or during a request is closed.',
  },
  REELFLOW_SERVICE_MAX_CONNECTIONS: {
    schema: wholeNumberText(1, 1_000_000).optional(),
    type: 'integer >= 1',
    defaultText: '¾ of (open-files limit − 64), 16-4096',
    description:
      'Open connections at most; beyond, the oldest connection without a complete request is closed (never one being answered).',
  },
  REELFLOW_SERVICE_MAX_CONNECTIONS_PER_ADDRESS: {
    schema: wholeNumberText(1, 1_000_000).optional(),
    type: 'integer >= 1',
    defaultText: '¾ of `REELFLOW_SERVICE_MAX_CONNECTIONS`',
    description: 'Open connections from one client address at most (same rule).',
  },
  REELFLOW_SERVICE_DATA_DIR: {
    schema: z.string().optional(),
    type: PATH,
    description: 'Journal and output files of the local service (`--data-dir`).',
  },
  REELFLOW_SERVICE_API_KEYS: {
    schema: z
      .string()
      .transform((text) =>
        text
          .split(',')
          .map((key) => key.trim())
          .filter(Boolean),
      )
      .optional(),
    type: 'comma-separated keys',
    defaultText: 'one generated key',
    description: 'API keys the local service accepts (`--api-key`, repeatable); stored hashed.',
    secret: true,
  },
  REELFLOW_SERVICE_ADMIN_KEY: {
    schema: z.string().optional(),
    type: 'secret, >= 16 characters',
    defaultText: 'none (no admin routes)',
    description: 'Admin credential: enables fault injection and credit grants (`--admin-key`).',
    secret: true,
  },
  REELFLOW_SERVICE_CREDITS: {
    schema: wholeNumberText(0).optional(),
    type: 'integer >= 0',
    defaultText: '`100000`',
    description: 'Credits of a fresh data directory (`--credits`).',
  },
  REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS: {
    schema: booleanTextSchema.default(false),
    type: 'boolean',
    description:
      'Allow private, loopback and plain-http webhook and input URLs: local use only (`--allow-private-webhooks`).',
  },
  REELFLOW_SERVICE_PUBLIC_URL: {
    schema: z.string().optional(),
    type: 'http(s) URL',
    defaultText: '`http://<host>:<port>`',
    description: 'Base URL clients see (`--public-url`).',
  },
  REELFLOW_SERVICE_CONCURRENCY: {
    schema: wholeNumberText(1, 64).optional(),
    type: 'integer 1-64',
    defaultText: '`2`',
    description: 'Jobs running at once per model (`--concurrency`).',
  },
  REELFLOW_SERVICE_EMIT_FAILURE_EVENTS: {
    schema: booleanTextSchema.optional(),
    type: 'boolean',
    defaultText: '`false`',
    description: 'Also send `generation.failed` and `generation.cancelled` events (`--emit-failure-events`).',
  },
  REELFLOW_SERVICE_QUOTES_PER_MINUTE: {
    schema: wholeNumberText(1, 1_000_000).optional(),
    type: 'integer 1-1000000',
    defaultText: '`120` (burst `30`)',
    description:
      'Quotes each API key may make per minute, also its burst (`--quotes-per-minute`; the benches set it wide).',
  },
  REELFLOW_SERVICE_LOG: {
    schema: booleanTextSchema.default(false),
    type: 'boolean',
    description: 'Log requests and webhook attempts as JSON (`--log`).',
  },
  REELFLOW_SERVICE_RENDER: {
    schema: z.enum(RENDER_MODES, { error: `must be one of ${RENDER_MODES.join(', ')}` }).default('ffmpeg'),
    type: '`ffmpeg` | `stub`',
    description: '`stub`: jobs complete with pre-rendered fixtures, a benchmarking aid (`--render`).',
  },
  REELFLOW_SERVICE_STUB_HOLD_MS: {
    schema: wholeNumberText(0, 86_400_000).optional(),
    type: 'ms, 0-86400000',
    defaultText: '`0`',
    description: 'Stub render: how long each job takes (`--stub-hold-ms`).',
  },
  REELFLOW_SERVICE_STUB_FIXTURES: {
    schema: z.string().optional(),
    type: PATH,
    defaultText: '`<data dir>/stub-fixtures`',
    description: 'Stub render: where the fixtures are kept (`--stub-fixtures`).',
  },

  // ---- Local stack ----
  REELFLOW_DEV_PORTS: {
    schema: z.enum(['auto'], { error: 'must be auto (or unset)' }).optional(),
    type: '`auto`',
    defaultText: 'stored, else 7233 / 8233 / 8710 / 8787',
    description:
      'On the first start of a state directory, pick free ports (`reelflow dev --auto-ports`); they are stored and reused.',
  },

  // ---- Tracing (OpenTelemetry's own names: docs/observability.md, "Tracing") ----
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    schema: otlpUrlSchema.optional(),
    type: 'URL',
    defaultText: 'unset: tracing off',
    description:
      'Turns tracing on: the OTLP/HTTP collector spans are exported to (as JSON, to `<URL>/v1/traces`), e.g. `http://127.0.0.1:4318`.',
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    schema: otlpUrlSchema.optional(),
    type: 'URL',
    defaultText: '`<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`',
    description: 'The traces URL itself (turns tracing on too, and wins over `OTEL_EXPORTER_OTLP_ENDPOINT`).',
  },
  OTEL_EXPORTER_OTLP_HEADERS: {
    schema: otlpHeadersSchema.optional(),
    type: 'secret',
    description:
      "Headers sent with each export, `key=value` pairs separated by commas, values percent-encoded (a collector's token).",
    secret: true,
  },
  OTEL_SERVICE_NAME: {
    schema: nonBlankSchema.optional(),
    type: 'name',
    defaultText: '`reelflow-worker`, `reelflow-bridge` or `reelflow-cli`',
    description: 'The `service.name` of the spans this process exports.',
  },
} as const satisfies Record<string, VariableSpec>;

/** A variable reelflow reads. */
export type VariableName = keyof typeof VARIABLES;

/** What a variable's text parses to (undefined when unset and without a default). */
export type VariableValue<N extends VariableName> = z.output<(typeof VARIABLES)[N]['schema']>;
