// A test server that runs a dialplan of the test's own (written to a file of its own, as an admin's
// extensions.conf would be) with one event socket open before the test starts: the set-up the
// ARI fidelity tests share.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type EventSocket, type TestServer } from './server.ts';

export interface WatchedDialplanServer {
  readonly server: TestServer;
  readonly events: EventSocket;
  /** Closes the socket, stops the server and removes the dialplan's directory. */
  close(): Promise<void>;
}

/** Starts a server on `dialplan` and opens `/events?<eventQuery>` on it. */
export async function startWatchedDialplan(dialplan: string, eventQuery: string): Promise<WatchedDialplanServer> {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-dialplan-'));
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  writeFileSync(join(dir, 'extensions.conf'), dialplan);
  let server: TestServer | undefined;
  try {
    server = await startTestServer({ dialplan: { file: join(dir, 'extensions.conf') } });
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
