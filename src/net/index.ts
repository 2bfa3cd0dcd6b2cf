/**
 * The address rules of the service, in one module: which addresses, schemes and ports may be
 * reached when registering a webhook endpoint, delivering to it, or fetching an input URL.
 * Implemented in small files; this module is the one to import.
 */
export {
  checkUrlSyntax,
  resolvePublic,
  type AddressRuleOptions,
  type LookupFn,
  type ResolvedAddress,
} from './url-rules';
export { checkWebhookUrl } from './webhook-url';
export { safeDownload, safeFetch } from './safe-fetch';
export { SafeFetchError } from './errors';
