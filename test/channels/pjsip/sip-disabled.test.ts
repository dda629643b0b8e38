// `sip.enabled: false` starts the server without SIP, as an Asterisk whose modules.conf has
// `noload => chan_pjsip.so`: no SIP listener, no media workers, chan_pjsip.so listed as not
// running, PJSIP dial strings refused; `module load` still starts it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;

before(async () => {
  server = await startTestServer({ sip: { enabled: false } });
});
after(async () => {
  await server?.stop();
});

test('sip.enabled false: chan_pjsip.so is not loaded, nothing listens for SIP, ARI works', async () => {
  const modules = (await (await server.ari('/asterisk/modules')).json()) as { name: string; status: string }[];
  assert.equal(modules.find((module) => module.name === 'chan_pjsip.so')?.status, 'Not Running');
  assert.equal(server.core.pjsip.mediaWorkers, undefined, 'no media workers without SIP');
  assert.equal(server.core.technologies.isRunning(server.core.pjsip), false, 'the PJSIP technology is not started');
  assert.equal(server.core.pjsip.port, 0, 'no SIP port');
  const ping = await server.ari('/asterisk/ping');
  assert.equal(ping.status, 200);
  const dialled = await server.ari('/channels?endpoint=PJSIP/alice&app=x', { method: 'POST' });
  assert.ok(dialled.status >= 400 && dialled.status < 500, `a PJSIP originate is refused: ${dialled.status}`);
  const health = await fetch(`${server.url}/health`);
  assert.equal(health.status, 200, 'SIP switched off is not a degraded server');
});

test('module load chan_pjsip.so starts SIP on demand', async () => {
  const loaded = await server.ari('/asterisk/modules/chan_pjsip.so', { method: 'POST' });
  assert.equal(loaded.status, 204, await loaded.text());
  assert.ok(typeof server.core.pjsip.port === 'number' && server.core.pjsip.port > 0, 'SIP listens once loaded');
});
