// A test server that runs a dialplan of the test's own (written to a file of its own, as an admin's
// extensions.conf would be) with one event socket open before the test starts: the set-up the
// ARI fidelity tests share (watchDialplanInSuite starts and closes it around a suite).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type EventSocket, type TestServer, type TestServerOptions } from './server.ts';
import { fixtureInSuite } from './suite-fixture.ts';

export interface WatchedDialplanServer {
  readonly server: TestServer;
  readonly events: EventSocket;
  /** Closes the socket, stops the server and removes the dialplan's directory. */
  close(): Promise<void>;
}

/** What a watched dialplan's server runs beside the dialplan (a test's own channel technologies). */
export type WatchedDialplanOptions = Pick<TestServerOptions, 'technologies'>;

/** Starts a server on `dialplan` and opens `/events?<eventQuery>` on it. */
export async function startWatchedDialplan(dialplan: string, eventQuery: string, options: WatchedDialplanOptions = {}): Promise<WatchedDialplanServer> {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-dialplan-'));
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  writeFileSync(join(dir, 'extensions.conf'), dialplan);
  let server: TestServer | undefined;
  try {
    server = await startTestServer({ dialplan: { file: join(dir, 'extensions.conf') } }, options);
    const events = await server.events(eventQuery);
    const started = server;
    return {
      server: started,
      events,
      async close() {
        await events.close();
        await started.stop();
        removeDir();
      },
    };
  } catch (error) {
    await server?.stop();
    removeDir();
    throw error;
  }
}

/** The running server of a suite's watched dialplan; read it inside the suite's tests (after its `before`). */
export interface WatchedDialplanSuite {
  readonly server: TestServer;
  readonly events: EventSocket;
}

/**
 * Registers `before`/`after` hooks in the current suite (or file) that start a server on `dialplan`
 * watched through `/events?<eventQuery>`, and close it: the head every ARI fidelity test file shares.
 */
export function watchDialplanInSuite(dialplan: string, eventQuery: string, options: WatchedDialplanOptions = {}): WatchedDialplanSuite {
  return fixtureInSuite('the watched dialplan server', () => startWatchedDialplan(dialplan, eventQuery, options), (fixture) => fixture.close());
}
