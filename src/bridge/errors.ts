/**
 * Typed errors of the webhook bridge, each with a stable `code` that scripts and tests branch on.
 */

/** The event could not be made durable (the route store is down, or the inbox is full): answer 503. */
export { EventSinkUnavailableError } from '../contract';
