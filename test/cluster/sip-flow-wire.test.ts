// The wire of calls over another member's connection (src/cluster/sip-flow-wire.ts) and the flow
// address of a shared contact (contacts.ts) against hostile input: every field is checked, a bad
// message is refused with a reason, never thrown on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeSharedContact } from '../../src/cluster/contacts.ts';
import { decodeFlowMessage, decodeFlowReply, encodeFlow, flowData, MAX_RELAYED_MESSAGE, sipFlowSubject } from '../../src/cluster/sip-flow-wire.ts';

const sip = Buffer.from('OPTIONS sip:a@127.0.0.1 SIP/2.0\r\nContent-Length: 0\r\n\r\n').toString('base64');
const raw = (value: unknown): Uint8Array => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('SIP flow messages between members', () => {
  it('round-trips each operation', () => {
    const messages = [
      { op: 'send', from: 'nodeB', flow: 'f-1', contact: 'sip:alice@127.0.0.1:5070;transport=tcp', data: sip },
      { op: 'release', from: 'nodeB', flow: 'f-1' },
      { op: 'deliver', from: 'nodeA', flow: 'f-1', data: sip, address: '::1', port: 5070 },
      { op: 'closed', from: 'nodeA', flow: 'f-1', reason: 'gone' },
    ] as const;
    for (const message of messages) assert.deepEqual(decodeFlowMessage(encodeFlow(message)), message);
    assert.equal(sipFlowSubject('pb.c', 'nodeA'), 'pb.c.node.nodeA.sipflow');
  });

  it('refuses hostile messages with a reason', () => {
    const good = { op: 'send', from: 'nodeB', flow: 'f-1', contact: 'sip:alice@127.0.0.1', data: sip };
    const refusals: Array<[unknown, RegExp]> = [
      ['not json', /not JSON/],
      ['null', /not an object/],
      [{ ...good, from: 'a.b' }, /bad from/],
      [{ ...good, from: 'x'.repeat(65) }, /bad from/],
      [{ ...good, flow: '*' }, /bad flow/],
      [{ ...good, op: 'drop-tables' }, /unknown op/],
      [{ ...good, data: '' }, /bad data/],
      [{ ...good, data: 'not base64!' }, /bad data/],
      [{ ...good, data: 42 }, /bad data/],
      [{ ...good, contact: '' }, /bad contact/],
      [{ ...good, contact: 'c'.repeat(2000) }, /bad contact/],
      [{ op: 'deliver', from: 'nodeA', flow: 'f', data: sip, address: 'example.com', port: 5 }, /bad address/],
      [{ op: 'deliver', from: 'nodeA', flow: 'f', data: sip, address: '127.0.0.1', port: 70_000 }, /bad port/],
      [{ op: 'deliver', from: 'nodeA', flow: 'f', data: sip, address: '127.0.0.1', port: 1.5 }, /bad port/],
      ['x'.repeat(200_000), /too large/],
    ];
    for (const [input, reason] of refusals) {
      const decoded = decodeFlowMessage(raw(input));
      assert.equal(typeof decoded, 'string', JSON.stringify(input).slice(0, 80));
      assert.match(decoded as string, reason);
    }
    // A close's reason is cut short, never refused.
    const closed = decodeFlowMessage(raw({ op: 'closed', from: 'a', flow: 'f', reason: 'r'.repeat(1000) }));
    assert.equal(typeof closed === 'object' && closed.op === 'closed' ? closed.reason.length : 0, 200);
  });

  it('bounds the SIP bytes to the stack maximum', () => {
    const within = Buffer.alloc(MAX_RELAYED_MESSAGE, 65).toString('base64');
    const beyond = Buffer.alloc(MAX_RELAYED_MESSAGE + 3, 65).toString('base64');
    const send = (data: string) => decodeFlowMessage(raw({ op: 'send', from: 'b', flow: 'f', contact: 'sip:a@h', data }));
    const ok = send(within);
    assert.ok(typeof ok === 'object' && ok.op === 'send' && flowData(ok)?.length === MAX_RELAYED_MESSAGE);
    assert.match(send(beyond) as string, /bad data/);
  });

  it('reads replies, a malformed one as 502', () => {
    assert.deepEqual(decodeFlowReply(encodeFlow({ status: 200 })), { status: 200 });
    assert.deepEqual(decodeFlowReply(encodeFlow({ status: 404, reason: 'no connection' })), { status: 404, reason: 'no connection' });
    for (const bad of ['{', '[]', '{"status":"200"}', '{"status":99}', '{"status":200.5}']) assert.equal(decodeFlowReply(raw(bad)).status, 502, bad);
  });
});

describe('the flow address of a shared contact', () => {
  const entry = { aor: 'alice', uri: 'sip:alice@127.0.0.1:5070;transport=tcp', holder: 'nodeA', transport: 'tcp', expiresAt: Date.now() + 60_000 };
  it('is taken when it is a host and a port', () => {
    assert.deepEqual(decodeSharedContact(raw({ ...entry, flow: { host: '192.0.2.1', port: 5060 } }))?.flow, { host: '192.0.2.1', port: 5060 });
    assert.deepEqual(decodeSharedContact(raw({ ...entry, flow: { host: 'pbx-a.example.com', port: 5061 } }))?.flow, { host: 'pbx-a.example.com', port: 5061 });
    assert.equal(decodeSharedContact(raw(entry))?.flow, undefined, 'an entry without one (a member relaying nothing) is still a contact');
  });
  it('makes the entry ignored when it is anything else', () => {
    for (const flow of [null, 'x', { host: '', port: 5060 }, { host: 'a b', port: 5060 }, { host: 'h\r\nX: y', port: 5060 }, { host: 'h', port: 0 }, { host: 'h', port: 65_536 }, { host: 'h', port: '5060' }, { host: 'h'.repeat(300), port: 5060 }]) {
      assert.equal(decodeSharedContact(raw({ ...entry, flow })), undefined, JSON.stringify(flow));
    }
  });
});
