/**
 * src/config: the one reader of the environment (ESLint refuses `process.env` anywhere else in src).
 * Every variable is declared once in ./variables.ts; each process reads its own set (./processes.ts)
 * through its loader, validated at boot: a bad or missing value is a ConfigError (code
 * `config_invalid`) naming the variable, and the process exits 2. docs/configuration.md is generated
 * from these declarations (`npm run docs:config`).
 */
export { ConfigError, CONFIG_EXIT_CODE, MissingPackageError, type ConfigIssue } from './errors';
export { OPTIONAL_PACKAGES, requireOptional, type OptionalPackage } from './optional-packages';
export { textOf, variableIsSet, type Env, type FlagValue, type Flags } from './read';
export { VARIABLES, type VariableName, type VariableSpec } from './variables';
export {
  PROCESS_VARIABLES,
  WORKER_VARIABLES,
  BRIDGE_VARIABLES,
  SERVICE_VARIABLES,
  CLI_VARIABLES,
  type ProcessVariables,
} from './processes';
export * from './schemas';
export { parseDurationSeconds } from './duration';
export { parsePort } from './port';
export {
  loadTemporalSettings,
  loadTemporalConnection,
  connectionOptions,
  describeTemporalConnection,
  type TemporalSettings,
  type TemporalConnectionSettings,
  type TemporalTlsSettings,
  type TemporalConnectOptions,
  type PemSource,
} from './temporal';
export { loadMediaSettings, type MediaStoreSettings } from './media';
export { loadServiceSettings, type ServiceSettings } from './service-client';
export {
  loadEnv,
  loadEnvWithService,
  loadStackSettings,
  type ReelflowEnv,
  type EnvNeeds,
  type StackSettings,
} from './cli';
export {
  loadAccountLimits,
  loadWorkerConfig,
  loadWorkerDeployment,
  loadWorkerTuning,
  loadPluginSettings,
  type PluginSettings,
  type AccountLimitSettings,
  type WorkerConfig,
  type WorkerDeploymentSettings,
  type WorkerTuning,
} from './worker';
export { loadBridgeConfig, type BridgeConfig } from './bridge';
export { loadServiceConfig, RENDER_MODES, type RenderMode, type ServiceProcessSettings } from './local-service';
export { toolPaths } from './tools';
export {
  loadRouteStoreSettings,
  DEFAULT_ROUTE_TTL_SECONDS,
  ROUTE_STORE_VARIABLE_NAMES,
  type RouteStoreSettings,
} from './route-store';
export { parseRouteStoreLocation, describeRouteStoreLocation, type RouteStoreLocation } from './route-store-location';
