import { formatPath, type FieldError, type UriRules } from '../../contract';
import { checkUrlSyntax } from '../../net/url-rules';
import type { PipelineSpec } from '../../pipeline-spec/spec';
import { OP_MEDIA_FIELDS } from '../../pipeline-spec/steps/op-types';

/**
 * The spec's address rules on a spec's literal input URLs, before anything starts: a URL the
 * service would never fetch (169.254.169.254, a private or loopback IP literal, a port other than
 * 443/8443, credentials in the URL) is refused by the CLI with its field path (exit 2) instead of
 * starting a pipeline that preflight fails or the service refuses. Only what needs no DNS is checked
 * here: a host name that resolves to a private address is preflight's to find (docs/preflight.md).
 * URLs of the configured service's own origin (its outputs, `rules.allowedOrigins`) are exempt, as
 * preflight reads them with private addresses allowed.
 */
export function inputAddressProblems(spec: PipelineSpec, rules: UriRules | undefined): FieldError[] {
  const trusted = (rules?.allowedOrigins ?? []).map((origin) => `${origin.replace(/\/+$/, '')}/`);
  const problems: FieldError[] = [];
  const check = (value: unknown, at: (string | number)[]) => {
    if (typeof value !== 'string' || value.startsWith('data:')) return;
    if (trusted.some((origin) => value.startsWith(origin))) return;
    const checked = checkUrlSyntax(value, { allowPrivate: false });
    if (!checked.ok)
      problems.push({ path: formatPath(at), message: `${checked.reason} (the address rules inputs obey)` });
  };
  spec.steps.forEach((step, index) => {
    for (const [key, value] of Object.entries(step.input as Record<string, unknown>)) {
      if ('op' in step ? !OP_MEDIA_FIELDS.includes(key) : !/_urls?$/.test(key)) continue;
      const at = ['steps', index, 'input', key];
      if (Array.isArray(value)) value.forEach((item, i) => check(item, [...at, i]));
      else check(value, at);
    }
  });
  return problems;
}
