/**
 * The address rules of the service, in one module: which addresses, schemes and ports may be
 * reached when registering a webhook endpoint, delivering to it, or fetching an input URL.
 * Implemented in small files; this module is the one to import.
 */
export { classifyAddress, isIpLiteral, type AddressClass } from './ip-class';
export {
  addressProblem,
  checkUrlSyntax,
  resolvePublic,
  validateUrl,
  type AddressRuleOptions,
  type LookupFn,
  type PinCheck,
  type ResolveCheck,
  type ResolvedAddress,
  type UrlCheck,
  type UrlScheme,
} from './url-rules';
export { checkWebhookUrl, type WebhookUrlCheck, type WebhookUrlOptions } from './webhook-url';
export { createPinnedAgent, pinnedRequest, type PinnedResponse, type PinnedTimeouts } from './pinned-request';
export { safeDownload, safeFetch, type SafeFetchMeta, type SafeFetchOptions, type SafeFetchResult } from './safe-fetch';
export { SafeFetchError, type SafeFetchErrorCode } from './errors';
