// A live, stateful hostile-input sweep: a started server is driven over raw UDP (here) and TCP
// (live-sweep-tcp.test.ts) sockets into odd dialog states with hostile content (live-sweep-cases.ts,
// live-sweep-sdp.ts, run by live-sweep-run.ts). After every case the server must answer OPTIONS and
// GET /ari/asterisk/ping, must have logged no crash, must hold no channel or SIP call, and must not
// have answered a malformed message with 5xx (RFC 3261 asks for 400 or silence). At the end the SIP
// gauges (calls, subscriptions, transactions) must be back to zero once the transaction timers ran out.
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../../helpers/server.ts';
import { drained, sweep, SWEEP_EXTENSIONS } from './live-sweep-run.ts';
import { startSweepServer, type SweepServer } from './live-sweep-server.ts';

let started: SweepServer | undefined;
let server: TestServer;

before(async () => {
  started = await startSweepServer('patchbay-live-sweep-', SWEEP_EXTENSIONS);
  server = started.server;
});

after(async () => {
  await started?.stop();
});

describe('live hostile-input sweep of SIP dialogs', () => {
  it('over UDP: every case leaves the server answering, crash-free and holding nothing', { timeout: 300_000 }, () => sweep(server, 'UDP'));

  it('afterwards the SIP gauges are back to zero once the transaction timers ran out', { timeout: 120_000 }, () => drained(server));
});
