// What calling a phone over another member's connection costs (docs/cluster.md, "Calling a phone
// on another member's connection"): a real nats-server -js and two members in this process; a raw
// TCP phone (answering at once) registers through member A. Each round originates PJSIP/alice into
// Stasis, once on A (its own connection: the single-server path) and once on B (over A's
// connection, every SIP message a NATS round trip), and times the originate request to the
// StasisStart of the answered call, then the hang-up request to the ChannelDestroyed. Medians and
// 95th percentiles of each case.
// Usage: npm run bench:cluster-tcp-relay [-- --calls 50]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startTestServer, type EventSocket, type TestServer } from '../test/helpers/server.ts';
import { natsServerInstalled, startNatsServer } from '../test/helpers/nats-server.ts';
import { RawTcpPhone } from '../test/helpers/raw-tcp-phone.ts';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '50' } } });
const CALLS = Math.min(Math.max(Math.floor(Number(values.calls)) || 50, 5), 2000);
const APP = 'relaybench';
type Json = Record<string, any>;

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function nextEvent(events: EventSocket, type: string, id: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (event.type === type && event.channel?.id === id) return;
  }
}

/** Milliseconds from the originate to the answered call's StasisStart, and from the DELETE to its ChannelDestroyed. */
async function call(server: TestServer, events: EventSocket, id: string): Promise<{ setup: number; teardown: number }> {
  const started = performance.now();
  const created = await server.ari(`/channels?endpoint=PJSIP/alice&app=${APP}&channelId=${id}`, { method: 'POST' });
  if (created.status !== 200) throw new Error(`originate ${id}: ${created.status} ${await created.text()}`);
  await nextEvent(events, 'StasisStart', id);
  const up = performance.now();
  await server.ari(`/channels/${id}`, { method: 'DELETE' });
  await nextEvent(events, 'ChannelDestroyed', id);
  return { setup: up - started, teardown: performance.now() - up };
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

if (!natsServerInstalled()) throw new Error('nats-server is not installed (apt-get install nats-server)');
const dir = mkdtempSync(join(tmpdir(), 'patchbay-bench-tcp-relay-'));
writeFileSync(join(dir, 'extensions.conf'), '[phones]\nexten => park,1,Answer()\n');
const nats = await startNatsServer();
const settings = (node: string, serverId: string): Json => ({
  server_id: serverId,
  dialplan: { file: join(dir, 'extensions.conf') },
  cluster: { nats_url: nats.url, node_id: node, failure_seconds: 5 },
  config_objects: { res_pjsip: { endpoint: { alice: { context: 'phones', allow: 'ulaw', aors: 'alice' } }, aor: { alice: { max_contacts: 1, remove_existing: 'yes' } } } },
});
const a = await startTestServer(settings('nodeA', '02:00:00:00:7a:01'));
const b = await startTestServer(settings('nodeB', '02:00:00:00:7b:01'));
const phone = new RawTcpPhone('alice');
try {
  await phone.open(a.core.pjsip.port);
  await phone.register(a.core.pjsip.port, 3600);
  await until('B knows the contact', () => b.core.pjsip.contacts().some((contact) => contact.source.includes('via cluster member')));
  // The members know each other (a flow goes only to a live member).
  await until('the members know each other', async () => (await b.ari('/channels?endpoint=PJSIP/alice&app=none&channelId=probe', { method: 'POST' })).status === 200);
  await b.ari('/channels/probe', { method: 'DELETE' });
  const [eventsA, eventsB] = [await a.events(`app=${APP}`), await b.events(`app=${APP}`)];
  const direct: Array<{ setup: number; teardown: number }> = [];
  const relayed: Array<{ setup: number; teardown: number }> = [];
  for (let n = 0; n < CALLS; n++) {
    direct.push(await call(a, eventsA, `direct-${n}`));
    relayed.push(await call(b, eventsB, `relayed-${n}`));
  }
  const line = (name: string, runs: Array<{ setup: number; teardown: number }>): string =>
    `${name}: set-up median ${quantile(runs.map((run) => run.setup), 0.5).toFixed(1)} ms, p95 ${quantile(runs.map((run) => run.setup), 0.95).toFixed(1)} ms; hang-up median ${quantile(runs.map((run) => run.teardown), 0.5).toFixed(1)} ms, p95 ${quantile(runs.map((run) => run.teardown), 0.95).toFixed(1)} ms`;
  console.log(`${CALLS} calls each, load average ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);
  console.log(line('on A (its own connection)', direct));
  console.log(line('on B (over A\'s connection)', relayed));
  await eventsA.close();
  await eventsB.close();
} finally {
  phone.close();
  await b.stop();
  await a.stop();
  await nats.stop();
  rmSync(dir, { recursive: true, force: true });
}
