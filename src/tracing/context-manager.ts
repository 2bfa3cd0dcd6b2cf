import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, ContextManager } from '@opentelemetry/api';

/**
 * OpenTelemetry's active context on Node's AsyncLocalStorage: what makes the span Temporal's activity
 * interceptor starts the parent of the service call the activity makes, and the bridge's signal span the
 * parent of the client's signal span. (The same as @opentelemetry/context-async-hooks' manager, without
 * one more package to install.)
 */
export class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  constructor(private readonly root: Context) {}

  active(): Context {
    return this.storage.getStore() ?? this.root;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    const run = <R>(work: () => R): R => this.storage.run(context, work);
    return function bound(this: unknown, ...args: unknown[]) {
      return run(() => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
