import { ReelflowError } from '../contract';

/**
 * Typed errors of the framework-free webhook receiver. Verification itself never throws: it answers
 * `{ ok: false, reason }`. Only a receiver built with unusable options fails, at construction.
 */

/** `createWebhookReceiver` got options it cannot run with; the message names the option. */
export class WebhookReceiverOptionsError extends ReelflowError {
  readonly code = 'webhook_receiver_options_invalid' as const;
}
