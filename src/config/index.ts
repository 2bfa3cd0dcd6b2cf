/** Configuration from the environment: import from here (src/config/env.ts is the one reader). */
export * from './env';
export { loadTemporalSettings, TemporalConfigError } from './temporal';
