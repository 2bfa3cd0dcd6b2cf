import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const { v1 } = temporal.api.workflowservice;

/**
 * Readies, at the forwarder's start, what its first signal would otherwise set up on the bridge's event
 * loop in the middle of the first burst after a boot: protobufjs builds a message's encoder and decoder
 * on their first use (about 16 ms for a signal request), and a lazy connection opens its channel on its
 * first call. Measured on the footprint bench's first burst: with neither ready, the first signal held
 * the loop for about 40 ms while 16 deliveries waited for their commit (docs/decisions/bridge.md,
 * "The first signal after a boot"). The messages built here are the forwarder's own: signals, and the
 * describe of the route-workflow fallback. Resolves true once Temporal answered; false when it did not
 * within `timeoutMs` (the forwarder connects on its first signal then, as before); never rejects.
 */
export async function warmSignalPath(client: Client, timeoutMs = 5_000): Promise<boolean> {
  try {
    const namespace = client.options.namespace;
    const workflowExecution = { workflowId: 'reelflow-warm-up' };
    const payload = {
      metadata: { encoding: new TextEncoder().encode('json/plain') },
      data: new Uint8Array([123, 125]),
    };
    v1.SignalWorkflowExecutionRequest.encode({
      namespace,
      workflowExecution,
      signalName: 'warm-up',
      input: { payloads: [payload] },
      header: { fields: {} },
    }).finish();
    v1.SignalWorkflowExecutionResponse.decode(new Uint8Array());
    v1.DescribeWorkflowExecutionRequest.encode({ namespace, execution: workflowExecution }).finish();
    v1.DescribeWorkflowExecutionResponse.decode(new Uint8Array());
    await client.connection.withDeadline(Date.now() + timeoutMs, () => client.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}
