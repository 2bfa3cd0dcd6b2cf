/**
 * Attempts of the submit activity (its Temporal retry policy, src/workflows/steps/job/proxies.ts): a
 * submit whose every attempt answered 429 is an account-level refusal (a batch pauses on it). Plain
 * data, so the workflows that set the policy and the activity that keeps its slot across the attempts
 * (src/activities/index.ts) read the same number.
 */
export const SUBMIT_MAX_ATTEMPTS = 10;
