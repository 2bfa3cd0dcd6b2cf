import { z } from 'zod';

/**
 * A URI input of the service: a public `https://` URL (no credentials in it) or an inline
 * base64 data URI. Address rules that need DNS (public space only) are enforced where the
 * URL is fetched; see `address-rules.ts` for the pure part.
 */
const DATA_URI = /^data:[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(;[a-z0-9-]+=[^;,]+)*;base64,[A-Za-z0-9+/]*={0,2}$/i;

/** Options of URI validation. */
export interface UriRules {
  /**
   * Origins (e.g. a local service's own `http://127.0.0.1:8787`) whose URLs are accepted even
   * though they are not https: the service accepts its own output URLs as inputs.
   */
  allowedOrigins?: readonly string[];
  /**
   * Accept plain `http://` URLs of local hosts (localhost, loopback and private IP literals): a local
   * service started with `--allow-private-webhooks` fetches those (e.g. signed URLs of a MinIO media
   * store on loopback), so its validation accepts them. Public hosts still need https.
   */
  allowPlainHttp?: boolean;
}

/** localhost, 127/8, 10/8, 172.16/12, 192.168/16 and [::1]: hosts that only exist on this machine or network. */
const LOCAL_HOST =
  /^(localhost|127(\.\d{1,3}){3}|10(\.\d{1,3}){3}|172\.(1[6-9]|2\d|3[01])(\.\d{1,3}){2}|192\.168(\.\d{1,3}){2}|\[::1\])$/i;

/** Describes why a string is not an acceptable URI input, or returns null when it is. */
export function uriProblem(value: string, rules: UriRules = {}): string | null {
  if (rules.allowedOrigins?.some((origin) => value.startsWith(`${origin.replace(/\/+$/, '')}/`))) return null;
  if (value.startsWith('data:')) {
    return DATA_URI.test(value) ? null : 'must be a base64 data URI (data:<type>;base64,<data>)';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an https URL or a base64 data URI';
  }
  const localHttp = rules.allowPlainHttp === true && url.protocol === 'http:' && LOCAL_HOST.test(url.hostname);
  if (url.protocol !== 'https:' && !localHttp) return 'must use https (or be a base64 data URI)';
  if (url.username || url.password) return 'must not carry credentials';
  if (!url.hostname) return 'must name a host';
  return null;
}

/** Schema of a URI input field under the given rules. */
export function makeUriSchema(rules: UriRules = {}) {
  return z.string().superRefine((value, ctx) => {
    const problem = uriProblem(value, rules);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}
