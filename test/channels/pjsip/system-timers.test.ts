// pjsip.conf type=system's timer_t1 and timer_b reach the SIP transactions: an INVITE to a phone
// that never answers is retransmitted and given up at Timer B, so the channel ends long before the
// default 32 s (the retransmissions' spacing is not asserted: the socket shares the server's loop). The bound between the two is wide (the default
// would take 32 s, the setting 9 s; the test allows 25 s) so that a loaded machine passes.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { test } from 'node:test';
import { startTestServer } from '../../helpers/server.ts';

test('timer_t1=100, timer_b=9000, disable_rport=yes: a silent callee (asked without rport) is retransmitted to and given up at Timer B, not the default 32 s', async () => {
  const silent = createSocket('udp4');
  const received: number[] = [];
  const vias: string[] = [];
  silent.on('message', (message) => {
    const text = message.toString('latin1');
    if (!text.startsWith('INVITE ')) return;
    received.push(Date.now());
    vias.push(/^Via:(.*)$/im.exec(text)?.[1]?.trim() ?? '');
  });
  silent.bind(0, '127.0.0.1');
  await once(silent, 'listening');
  const port = silent.address().port;
  const server = await startTestServer({
    config_objects: { res_pjsip: { system: { system: { timer_t1: '100', timer_b: '9000', disable_rport: 'yes' } }, endpoint: { mute: { context: 'default', allow: 'ulaw', aors: 'mute' } }, aor: { mute: { contact: `sip:mute@127.0.0.1:${port}` } } } },
  } as never);
  const events = await server.events('app=timers');
  try {
    const started = Date.now();
    const created = await server.ari('/channels?endpoint=PJSIP/mute&app=timers', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    const id = ((await created.json()) as { id: string }).id;
    for (;;) {
      const event = (await events.next(30_000)) as { type: string; channel?: { id: string } };
      if (event.type === 'ChannelDestroyed' && event.channel?.id === id) break;
    }
    const took = Date.now() - started;
    assert.ok(took >= 8500, `given up after ${took} ms, before Timer B`);
    assert.ok(took < 25_000, `given up after ${took} ms: the default Timer B (32 s), not timer_b`);
    assert.match(vias[0]!, /;branch=z9hG4bK/);
    assert.doesNotMatch(vias[0]!, /rport/, 'disable_rport=yes: no rport in Via');
    assert.ok(received.length >= 2, `the INVITE was sent ${received.length} times: it is retransmitted until Timer B`);
  } finally {
    await events.close();
    await server.stop();
    silent.close();
  }
});
