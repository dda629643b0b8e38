// A CommonJS package loaded the first time it is needed rather than with the module that uses it:
// some packages cost megabytes resident and milliseconds of CPU to load (a WebAssembly build, a
// native addon, a crypto stack), which a server that never needs them should not pay at start
// (docs/performance.md, "The idle server's memory (stop 36)"). Synchronously, through require, so
// the callers stay synchronous: the first one pays the load, once per thread.
import { createRequire } from 'node:module';

export interface LoadedOnFirstUse<T> {
  /** The package; loads it on the first call. */
  get(): T;
  /** Whether this thread has loaded it yet (tests check that an idle server has not). */
  loaded(): boolean;
}

/**
 * `specifier` resolved from `fromUrl` (the caller's `import.meta.url`), required on the first `get()`.
 * `T` is the package's type (`typeof import('…')`), which the caller states: require is untyped.
 */
export function loadOnFirstUse<T>(specifier: string, fromUrl: string): LoadedOnFirstUse<T> {
  let module: T | undefined;
  return {
    get() {
      if (module === undefined) {
        const required: T = createRequire(fromUrl)(specifier);
        module = required;
      }
      return module;
    },
    loaded: () => module !== undefined,
  };
}
