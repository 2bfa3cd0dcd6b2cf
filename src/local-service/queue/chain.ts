import type { ModelInput } from '../../contract';

/**
 * The request whose output file the input's `video_url` names (`<publicUrl>/files/<request_id>/…`):
 * the earlier job of a chained step, recorded so benchmarks can measure the hand-off between the two
 * on the service's clock. Null for any other input.
 */
export function chainedFrom(publicUrl: string, input: ModelInput): string | null {
  const url = (input as { video_url?: unknown }).video_url;
  const prefix = `${publicUrl}/files/`;
  if (typeof url !== 'string' || !url.startsWith(prefix)) return null;
  const id = url.slice(prefix.length).split('/')[0];
  return id ? decodeURIComponent(id) : null;
}
