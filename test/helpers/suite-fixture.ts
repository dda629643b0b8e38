// A fixture a test file (or suite) starts in its `before` hook and closes in its `after`, handed to
// the tests as one object at module level: reading it outside a test (before `before` ran) throws
// with a message saying so, instead of a bare "undefined" deep in the test.
import { after, before } from 'node:test';

/**
 * Registers the hooks that run `start` and `close`; returns a stand-in that reads the started
 * fixture's properties (methods bound to it). `start` may return undefined (a skipped suite).
 */
export function fixtureInSuite<T extends object>(what: string, start: () => Promise<T | undefined>, close: (fixture: T) => Promise<void>): T {
  let started: T | undefined;
  before(async () => {
    started = await start();
  });
  after(async () => {
    if (started) await close(started);
  });
  const stand: Partial<T> = {};
  return new Proxy(stand as T, {
    get(_stand, property) {
      if (!started) throw new Error(`${what} is not running: read it inside a test of its suite`);
      const value: unknown = Reflect.get(started, property, started);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}
