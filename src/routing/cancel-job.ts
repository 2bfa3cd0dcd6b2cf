import type { GenerationRequest } from '../contract';
import { tooLateToCancel } from '../client/errors';
import type { ServiceClient } from '../client/types';

/**
 * Cancels the job of `request` (a submit the route store's processes made for a pipeline that will not
 * take it) through its `cancel_url`; a job that ended before the cancel reached it is left as it is.
 * Other failures are thrown (the client has retried the cancel already).
 */
export async function cancelUnlessEnded(
  client: Pick<ServiceClient, 'cancel'>,
  request: GenerationRequest,
): Promise<void> {
  await client.cancel(request.request_id, { cancelUrl: request.cancel_url }).catch((error: unknown) => {
    if (!tooLateToCancel(error)) throw error;
  });
}
