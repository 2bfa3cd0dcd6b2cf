/**
 * reelflow/webhooks: the service's signed deliveries, checked in any framework. `verifyWebhook` is the
 * pure check (never throws); `createWebhookReceiver` is a ready request handler for node:http and
 * Express. The Fastify plugin is `mountBridge` in reelflow/bridge. One implementation under all three
 * (src/bridge/delivery.ts over src/contract/signature.ts).
 *
 * @module webhooks
 */
export {
  verifyWebhook,
  type VerifyWebhookInput,
  type WebhookVerification,
  type WebhookFailureReason,
} from './verify-webhook';
export {
  createWebhookReceiver,
  DEFAULT_RECEIVER_BODY_LIMIT,
  type WebhookReceiver,
  type WebhookReceiverOptions,
  type ReceiverOutcome,
  type ReceiverRequest,
} from './receiver';
export { WebhookReceiverOptionsError } from './errors';
export { sign, signedHeaders, type SignInput } from '../contract/signature';
export { WEBHOOK_HEADERS } from '../contract';
export type { WebhookEvent } from '../contract';
