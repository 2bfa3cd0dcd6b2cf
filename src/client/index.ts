export * from './errors';
export * from './types';
export { createServiceClient } from './service-client';
export { backoffDelayMs, parseRetryAfterMs, DEFAULT_RETRY, DEFAULT_SUBMIT_RETRY } from './retry';
export * from './submit-policy';
export { AccountLimits, type AccountLimitsOptions, type PermitHolder } from './account-limits';
