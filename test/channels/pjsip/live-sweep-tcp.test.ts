// The live hostile-input sweep of SIP dialogs over TCP (see live-sweep.test.ts; apart so that each
// file fits the runner's time for a file on a loaded machine); the SIP gauges drain afterwards too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sumOf } from '../../helpers/prometheus.ts';
import type { TestServer } from '../../helpers/server.ts';
import { channelCount, metrics, sweep } from './live-sweep-run.ts';
import { pollUntil as until, startSweepServer, type SweepServer } from './live-sweep-server.ts';

let started: SweepServer | undefined;
let server: TestServer;

before(async () => {
  started = await startSweepServer('patchbay-live-sweep-tcp-', 'exten => hold,1,Answer()\n same => n,Wait(60)\nexten => ring,1,Ringing()\n same => n,Wait(60)\nexten => alice,hint,PJSIP/alice\n');
  server = started.server;
});

after(async () => {
  await started?.stop();
});

/** The SIP gauges back to zero once the transaction timers ran out (Timer J: 32 s after a UDP answer). */
async function drained(): Promise<void> {
  const done = await until(async () => {
    const samples = await metrics(server);
    return ['patchbay_sip_calls', 'patchbay_sip_subscriptions', 'patchbay_sip_transactions'].every((name) => sumOf(samples, name) === 0);
  }, 60_000);
  const samples = await metrics(server);
  assert.ok(done, `left: calls ${sumOf(samples, 'patchbay_sip_calls')}, subscriptions ${sumOf(samples, 'patchbay_sip_subscriptions')}, transactions ${sumOf(samples, 'patchbay_sip_transactions')}`);
  assert.equal(await channelCount(server), 0);
}

describe('live hostile-input sweep of SIP dialogs', () => {
  it('over TCP: every case leaves the server answering, crash-free and holding nothing', { timeout: 300_000 }, async () => {
    await sweep(server, 'TCP');
    await drained();
  });
});
