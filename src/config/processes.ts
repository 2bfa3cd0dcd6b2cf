import { SERVICE_CLIENT_VARIABLE_NAMES } from './service-client';
import { MEDIA_VARIABLE_NAMES } from './media';
import { TEMPORAL_CONNECTION_VARIABLE_NAMES, TEMPORAL_VARIABLE_NAMES } from './temporal';
import { TOOL_VARIABLE_NAMES } from './tools';
import { ROUTE_STORE_VARIABLE_NAMES } from './route-store';
import { TRACING_VARIABLE_NAMES } from './tracing';
import type { VariableName } from './variables';

/** A reelflow process and the variables it reads (the schema of its configuration). */
export interface ProcessVariables {
  /** How it is started. */
  title: string;
  /** Every variable it reads, in the order the table lists them. */
  variables: readonly VariableName[];
  /** Those it refuses to start without. */
  required: readonly VariableName[];
}

const TEMPORAL = TEMPORAL_VARIABLE_NAMES;
const SERVICE_CLIENT = SERVICE_CLIENT_VARIABLE_NAMES;
const MEDIA_STORE = MEDIA_VARIABLE_NAMES;
const TOOLS = TOOL_VARIABLE_NAMES;
/** The route store and where its default file lives. */
const ROUTE_STORE = [...ROUTE_STORE_VARIABLE_NAMES, 'REELFLOW_RENDEZVOUS_TTL_SECONDS'] as const;

/** The Temporal worker (src/workers/worker.ts, `reelflow worker`). */
export const WORKER_VARIABLES = {
  title: 'worker',
  variables: [
    ...TEMPORAL,
    ...SERVICE_CLIENT,
    ...MEDIA_STORE,
    'REELFLOW_ACCOUNT_CONCURRENCY',
    'REELFLOW_MODEL_CONCURRENCY',
    'REELFLOW_ACCOUNT_LIMITS_DIR',
    ...ROUTE_STORE,
    'REELFLOW_LOG_LEVEL',
    'REELFLOW_WORKFLOW_BUNDLE',
    'REELFLOW_DEPLOYMENT_NAME',
    'REELFLOW_BUILD_ID',
    'REELFLOW_SET_CURRENT_VERSION',
    'REELFLOW_MAX_CONCURRENT_ACTIVITIES',
    'REELFLOW_MAX_CONCURRENT_WORKFLOW_TASKS',
    'REELFLOW_MAX_CACHED_WORKFLOWS',
    'REELFLOW_SHUTDOWN_GRACE_SECONDS',
    'REELFLOW_METRICS_PORT',
    'REELFLOW_METRICS_HOST',
    'REELFLOW_SDK_METRICS_ADDRESS',
    'REELFLOW_WORKER_HEALTH_PORT',
    'REELFLOW_WORKER_HEALTH_HOST',
    ...TOOLS,
    ...TRACING_VARIABLE_NAMES,
  ],
  required: ['REELFLOW_SERVICE_URL', 'REELFLOW_API_KEY'],
} as const satisfies ProcessVariables;

/** The webhook bridge (src/workers/bridge.ts, `reelflow bridge`). */
export const BRIDGE_VARIABLES = {
  title: 'bridge',
  variables: [
    'REELFLOW_WEBHOOK_SECRETS',
    ...TEMPORAL_CONNECTION_VARIABLE_NAMES,
    'REELFLOW_BRIDGE_HOST',
    'REELFLOW_BRIDGE_PORT',
    'REELFLOW_BRIDGE_PATH',
    'REELFLOW_BRIDGE_BODY_LIMIT',
    'REELFLOW_BRIDGE_SIGNAL_TIMEOUT_MS',
    'REELFLOW_BRIDGE_BACKLOG_LIMIT',
    'REELFLOW_BRIDGE_REQUEST_TIMEOUT_MS',
    'REELFLOW_BRIDGE_IDLE_TIMEOUT_MS',
    'REELFLOW_BRIDGE_MAX_CONNECTIONS',
    'REELFLOW_BRIDGE_MAX_CONNECTIONS_PER_ADDRESS',
    'REELFLOW_BRIDGE_METRICS_PORT',
    'REELFLOW_BRIDGE_METRICS_HOST',
    // With the service's URL and key the bridge submits the steps pipelines prepared (src/routing/prepared.ts).
    ...SERVICE_CLIENT,
    // With the workers' caps the bridge frees a finished job's slot and hands it on (src/routing/account-slots.ts).
    'REELFLOW_ACCOUNT_CONCURRENCY',
    'REELFLOW_MODEL_CONCURRENCY',
    ...ROUTE_STORE,
    'REELFLOW_STATE_DIR',
    'REELFLOW_LOG_LEVEL',
    ...TRACING_VARIABLE_NAMES,
  ],
  required: ['REELFLOW_WEBHOOK_SECRETS'],
} as const satisfies ProcessVariables;

/** The local service (src/workers/local-service.ts, `reelflow service`, whose flags stand for these). */
export const SERVICE_VARIABLES = {
  title: 'service',
  variables: [
    'REELFLOW_SERVICE_HOST',
    'REELFLOW_SERVICE_PORT',
    'REELFLOW_SERVICE_REQUEST_TIMEOUT_MS',
    'REELFLOW_SERVICE_IDLE_TIMEOUT_MS',
    'REELFLOW_SERVICE_MAX_CONNECTIONS',
    'REELFLOW_SERVICE_MAX_CONNECTIONS_PER_ADDRESS',
    'REELFLOW_SERVICE_DATA_DIR',
    'REELFLOW_SERVICE_API_KEYS',
    'REELFLOW_SERVICE_ADMIN_KEY',
    'REELFLOW_SERVICE_CREDITS',
    'REELFLOW_SERVICE_ALLOW_PRIVATE_WEBHOOKS',
    'REELFLOW_SERVICE_PUBLIC_URL',
    'REELFLOW_SERVICE_CONCURRENCY',
    'REELFLOW_SERVICE_EMIT_FAILURE_EVENTS',
    'REELFLOW_SERVICE_QUOTES_PER_MINUTE',
    'REELFLOW_SERVICE_LOG',
    'REELFLOW_SERVICE_RENDER',
    'REELFLOW_SERVICE_STUB_HOLD_MS',
    'REELFLOW_SERVICE_STUB_FIXTURES',
    ...TOOLS,
  ],
  required: ['REELFLOW_SERVICE_DATA_DIR'],
} as const satisfies ProcessVariables;

/** The `reelflow` CLI's own commands (run, status, quote, ..., dev) and `npm run demo`. */
export const CLI_VARIABLES = {
  title: 'CLI',
  variables: [
    ...TEMPORAL,
    ...SERVICE_CLIENT,
    'REELFLOW_WEBHOOK_SECRETS',
    'REELFLOW_WEBHOOK_URL',
    'REELFLOW_EARLY_STATUS_CHECK_SECONDS',
    ...MEDIA_STORE,
    'REELFLOW_ACCOUNT_CONCURRENCY',
    'REELFLOW_MODEL_CONCURRENCY',
    'REELFLOW_ACCOUNT_LIMITS_DIR',
    ...ROUTE_STORE,
    'REELFLOW_DEV_PORTS',
    ...TOOLS,
    ...TRACING_VARIABLE_NAMES,
  ],
  required: [],
} as const satisfies ProcessVariables;

/** Every process, in the order the table's "Read by" column names them. */
export const PROCESS_VARIABLES: readonly ProcessVariables[] = [
  CLI_VARIABLES,
  WORKER_VARIABLES,
  BRIDGE_VARIABLES,
  SERVICE_VARIABLES,
];
