// A call bridged by an ARI application: two channels originated into Stasis meet in a mixing
// bridge. Asterisk's CDR engine pairs them (the older channel is party A, the other its party B,
// the record ends when one leaves), and CEL logs BRIDGE_ENTER/BRIDGE_EXIT with the bridge's id.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CallDetailRecord } from '../../../src/core/cdr/record.ts';
import type { EventSocket } from '../../helpers/server.ts';
import { collectUntil, startPbxServer, type AriEvent, type PbxServer } from '../../pbx/pbx-helpers.ts';

const DIALPLAN = `
[cdr-bridge]
exten => talk,1,Answer()
 same => n,Wait(30)
`;

describe('CDR and CEL of a bridged call', () => {
  let pbx: PbxServer;
  let events: EventSocket;
  const posted: CallDetailRecord[] = [];

  before(async () => {
    pbx = await startPbxServer(DIALPLAN, { cdr: { flush_ms: 20 }, cel: { enabled: true, events: 'ALL' } });
    pbx.server.core.records.onRecord((record) => posted.push(record));
    events = await pbx.server.events('app=cdr-app');
  });
  after(async () => {
    await events?.close();
    await pbx?.stop();
  });

  async function originate(): Promise<string> {
    const response = await pbx.server.ari('/channels?endpoint=Local/talk@cdr-bridge&app=cdr-app', { method: 'POST' });
    assert.equal(response.status, 200);
    const id = ((await response.json()) as { id: string }).id;
    await collectUntil(events, (e: AriEvent) => e.type === 'StasisStart' && (e.channel as { id: string }).id === id, 15_000);
    return id;
  }

  test('party A is the older channel, party B the other; CEL has BRIDGE_ENTER and BRIDGE_EXIT', async () => {
    const first = await originate();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await originate();
    const bridge = (await (await pbx.server.ari('/bridges?type=mixing', { method: 'POST' })).json()) as { id: string };
    assert.equal((await pbx.server.ari(`/bridges/${bridge.id}/addChannel?channel=${first}`, { method: 'POST' })).status, 204);
    assert.equal((await pbx.server.ari(`/bridges/${bridge.id}/addChannel?channel=${second}`, { method: 'POST' })).status, 204);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await pbx.server.ari(`/channels/${second}`, { method: 'DELETE' })).status, 204);
    assert.equal((await pbx.server.ari(`/channels/${first}`, { method: 'DELETE' })).status, 204);
    const deadline = Date.now() + 5000;
    while (!posted.some((r) => r.uniqueid === first) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const record = posted.find((r) => r.uniqueid === first && r.dstchannel !== '');
    assert.ok(record, JSON.stringify(posted.map((r) => [r.channel, r.dstchannel, r.disposition])));
    assert.match(record.channel, /^Local\/talk@cdr-bridge-[0-9a-f]+;1$/);
    assert.match(record.dstchannel, /^Local\/talk@cdr-bridge-[0-9a-f]+;1$/);
    assert.notEqual(record.channel, record.dstchannel);
    assert.equal(record.disposition, 'ANSWERED');
    assert.ok(record.billsec >= 1, `billsec ${record.billsec}`);
    await pbx.server.core.records.flush();
    const { events: cel } = pbx.server.core.records.queryCel({ limit: 1000, offset: 0 });
    const bridged = cel.filter((e) => e.eventtype === 'BRIDGE_ENTER' || e.eventtype === 'BRIDGE_EXIT').map((e) => [e.eventtype, e.uniqueid]);
    assert.deepEqual(bridged, [
      ['BRIDGE_ENTER', first],
      ['BRIDGE_ENTER', second],
      ['BRIDGE_EXIT', second],
      ['BRIDGE_EXIT', first],
    ]);
    const enter = cel.find((e) => e.eventtype === 'BRIDGE_ENTER' && e.uniqueid === second)!;
    assert.equal(JSON.parse(enter.extra).bridge_id, bridge.id);
    assert.equal(enter.peer, record.channel);
    const firstEvents = cel.filter((e) => e.uniqueid === first && e.eventtype !== 'LINKEDID_END').map((e) => e.eventtype);
    assert.deepEqual(firstEvents, ['CHAN_START', 'ANSWER', 'BRIDGE_ENTER', 'BRIDGE_EXIT', 'HANGUP', 'CHAN_END']);
  });

  test('three parties in one bridge: a record per pair (A→B, A→C, B→C), each ending when one of its two leaves', async () => {
    // Records of this test only (the metrics test counts every record posted).
    const earlier = posted.length;
    const mine = (): CallDetailRecord[] => posted.slice(earlier);
    const a = await originate();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const b = await originate();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const c = await originate();
    const bridge = (await (await pbx.server.ari('/bridges?type=mixing', { method: 'POST' })).json()) as { id: string };
    for (const id of [a, b, c]) assert.equal((await pbx.server.ari(`/bridges/${bridge.id}/addChannel?channel=${id}`, { method: 'POST' })).status, 204);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // C leaves first: A→C and B→C end; A→B goes on until A hangs up.
    assert.equal((await pbx.server.ari(`/channels/${c}`, { method: 'DELETE' })).status, 204);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await pbx.server.ari(`/channels/${b}`, { method: 'DELETE' })).status, 204);
    assert.equal((await pbx.server.ari(`/channels/${a}`, { method: 'DELETE' })).status, 204);
    const names = new Map<string, string>();
    const deadline = Date.now() + 5000;
    while (![a, b, c].every((id) => mine().some((r) => r.uniqueid === id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    for (const record of mine()) names.set(record.channel, record.uniqueid);
    const pairs = mine().filter((r) => r.dstchannel !== '' && [a, b, c].includes(r.uniqueid)).map((r) => `${r.uniqueid}>${names.get(r.dstchannel)}`);
    assert.deepEqual(pairs.sort(), [`${a}>${b}`, `${a}>${c}`, `${b}>${c}`].sort(), JSON.stringify(mine().map((r) => [r.channel, r.dstchannel, r.duration, r.billsec])));
    const pair = (x: string, y: string): CallDetailRecord => mine().find((r) => r.uniqueid === x && names.get(r.dstchannel) === y)!;
    assert.ok(pair(a, b).billsec >= 2, `A→B lasts until A leaves: ${pair(a, b).billsec}`);
    assert.ok(pair(a, c).billsec <= pair(a, b).billsec - 1, `A→C ends when C leaves: ${pair(a, c).billsec}`);
    assert.ok(pair(b, c).billsec <= pair(a, b).billsec - 1, `B→C ends when C leaves: ${pair(b, c).billsec}`);
    for (const record of [pair(a, b), pair(a, c), pair(b, c)]) assert.equal(record.disposition, 'ANSWERED');
  });

  test('GET /metrics counts the records posted and the rows written', async () => {
    await pbx.server.core.records.flush();
    const text = await (await fetch(`${pbx.server.url}/metrics`)).text();
    const value = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    assert.equal(value('patchbay_cdr_records_total'), posted.length);
    assert.ok(value('patchbay_cdr_rows_written_total') >= posted.length);
    assert.equal(value('patchbay_cdr_rows_dropped_total'), 0);
    assert.equal(value('patchbay_cdr_rows_pending'), 0);
  });
});
