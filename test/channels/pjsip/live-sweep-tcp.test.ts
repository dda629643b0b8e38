// The live hostile-input sweep of SIP dialogs over TCP (see live-sweep.test.ts; apart so that each
// file fits the runner's time for a file on a loaded machine); the SIP gauges drain afterwards too.
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../../helpers/server.ts';
import { drained, sweep, SWEEP_EXTENSIONS } from './live-sweep-run.ts';
import { startSweepServer, type SweepServer } from './live-sweep-server.ts';

let started: SweepServer | undefined;
let server: TestServer;

before(async () => {
  started = await startSweepServer('patchbay-live-sweep-tcp-', SWEEP_EXTENSIONS);
  server = started.server;
});

after(async () => {
  await started?.stop();
});

describe('live hostile-input sweep of SIP dialogs', () => {
  it('over TCP: every case leaves the server answering, crash-free and holding nothing', { timeout: 300_000 }, async () => {
    await sweep(server, 'TCP');
    await drained(server);
  });
});
