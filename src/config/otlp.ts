import { z } from 'zod';

/** The schemas of OpenTelemetry's standard exporter variables (OTEL_EXPORTER_OTLP_*), as reelflow reads them. */

/** An OTLP/HTTP endpoint: an http(s) URL, without a trailing slash. */
export const otlpUrlSchema = z
  .string()
  .trim()
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:4318' }))
  .transform((url) => url.replace(/\/+$/, ''));

/**
 * OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs separated by commas, values percent-encoded (the
 * OpenTelemetry specification's format), e.g. `authorization=Bearer%20abc,x-tenant=7`. A bad pair is
 * named by its position, never by its text (a header may hold a token).
 */
export const otlpHeadersSchema = z.string().transform((text, ctx) => {
  const headers: Record<string, string> = {};
  const pairs = text.split(',').filter((pair) => pair.trim() !== '');
  for (const [index, pair] of pairs.entries()) {
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : '';
    let value: string | undefined;
    try {
      value = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      value = undefined;
    }
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) || value === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `pair ${index + 1} is not key=value (a header name, then a percent-encoded value)`,
      });
      return z.NEVER;
    }
    headers[key.toLowerCase()] = value;
  }
  return headers;
});
