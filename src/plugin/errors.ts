import { ReelflowError } from '../contract/errors';

/** Typed errors of the worker plugin and the worker factory. */

/** `reelflowPlugin` or `createReelflowWorker` got an option it cannot run with; the message names the option. */
export class ReelflowPluginOptionsError extends ReelflowError {
  readonly code = 'plugin_options_invalid' as const;
}
