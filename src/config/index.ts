/**
 * src/config: the one reader of the environment (ESLint refuses `process.env` anywhere else in src).
 * Every variable is declared once in ./variables.ts; each process reads its own set (./processes.ts)
 * through its loader, validated at boot: a bad or missing value is a ConfigError (code
 * `config_invalid`) naming the variable, and the process exits 2. docs/configuration.md is generated
 * from these declarations (`npm run docs:config`).
 */
export { ConfigError, CONFIG_EXIT_CODE } from './errors';
export { textOf, variableIsSet, type Env, type Flags } from './read';
export { VARIABLES, type VariableName } from './variables';
export { PROCESS_VARIABLES, WORKER_VARIABLES, BRIDGE_VARIABLES, SERVICE_VARIABLES } from './processes';
export * from './schemas';
export { parseDurationSeconds } from './duration';
export { parsePort } from './port';
export {
  connectionOptions,
  describeTemporalConnection,
  loadTemporalConnection,
  type TemporalSettings,
} from './temporal';
export { loadMediaSettings, type MediaStoreSettings } from './media';
export { loadServiceSettings, type ServiceSettings } from './service-client';
export { loadEnv, loadEnvWithService, loadStackSettings, type ReelflowEnv, type EnvNeeds } from './cli';
export {
  loadAccountLimits,
  slotCapsOf,
  loadWorkerConfig,
  loadWorkerDeployment,
  loadWorkerTuning,
  type AccountLimitSettings,
  type WorkerTuning,
} from './worker';
export { loadBridgeConfig, type BridgeConfig } from './bridge';
export { loadServiceConfig, RENDER_MODES, type RenderMode } from './local-service';
export { loadRouteStoreSettings } from './route-store';
export { describeRouteStoreLocation } from './route-store-location';
export { describeTracing, loadTracingSettings } from './tracing';
