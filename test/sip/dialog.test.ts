import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Dialog, DialogTable } from '../../src/sip/dialog.ts';
import { SipRequest, createResponse, type SipResponse } from '../../src/sip/message.ts';
import { parseMessage } from '../../src/sip/parser.ts';
import type { SipUri } from '../../src/sip/uri.ts';
import { INVITE } from './samples.ts';
import { startStack, waitUntil, type Stack } from './helpers.ts';

const parse = (text: string): SipRequest => {
  const r = parseMessage(text);
  assert.ok(r.ok);
  return r.message as SipRequest;
};

const withRecordRoute = INVITE.replace('Max-Forwards: 70', 'Max-Forwards: 70\r\nRecord-Route: <sip:p1.example.org;lr>, <sip:p2.example.org;lr>');

describe('dialogs', () => {
  it('UAS: state from the INVITE and our 200; BYE goes to the remote target through the route set', () => {
    const invite = parse(withRecordRoute);
    const ok = createResponse(invite, 200, undefined, { toTag: 'uas1', copyRecordRoute: true });
    ok.add('Contact', '<sip:bob@192.0.2.4>');
    const d = Dialog.asUas(invite, ok)!;
    assert.equal(d.state, 'confirmed');
    assert.equal(d.localTag, 'uas1');
    assert.equal(d.remoteTag, '1928301774');
    assert.equal(d.remoteSeq, 314159);
    assert.deepEqual(d.routeSet, ['<sip:p1.example.org;lr>', '<sip:p2.example.org;lr>']);
    const bye = d.createRequest('BYE');
    assert.equal(bye.uriText || bye.startLine().split(' ')[1], 'sip:alice@192.0.2.10:5060;transport=udp');
    assert.deepEqual(bye.getAll('route'), ['<sip:p1.example.org;lr>', '<sip:p2.example.org;lr>']);
    assert.equal(bye.fromTag(), 'uas1');
    assert.equal(bye.toTag(), '1928301774');
    assert.equal(bye.callId(), invite.callId());
    const next = d.createRequest('INFO', { body: 'Signal=5', contentType: 'application/dtmf-relay' });
    assert.equal(next.cseq()!.seq, bye.cseq()!.seq + 1);
    assert.equal(next.get('content-type'), 'application/dtmf-relay');
    assert.deepEqual(d.nextHop(), { transport: 'UDP', host: 'p1.example.org', port: 5060 });
  });

  it('UAC: route set reversed from the 2xx, ACK keeps the INVITE CSeq, target refresh', () => {
    const invite = parse(INVITE);
    const ok = createResponse(invite, 200, undefined, { toTag: 'far' });
    ok.add('Record-Route', '<sip:p2.example.org;lr>, <sip:p1.example.org;lr>');
    ok.add('Contact', '<sip:bob@192.0.2.4:5070;transport=tcp>');
    const d = Dialog.asUac(invite, ok)!;
    assert.deepEqual(d.routeSet, ['<sip:p1.example.org;lr>', '<sip:p2.example.org;lr>']);
    const ack = d.createAck(314159);
    assert.deepEqual(ack.cseq(), { seq: 314159, method: 'ACK' });
    assert.equal(ack.toTag(), 'far');
    assert.equal((ack.uri as SipUri).host, '192.0.2.4');
    const bye = d.createRequest('BYE');
    assert.equal(bye.cseq()!.seq, 314160);
    // a re-INVITE from the far end moves the target
    const reinvite = new SipRequest('INVITE', 'sip:alice@192.0.2.10', [['Call-ID', d.callId], ['CSeq', '9 INVITE'], ['Contact', '<sip:bob@192.0.2.99>'], ['From', '<sip:bob@x>;tag=far'], ['To', '<sip:alice@y>;tag=1928301774']]);
    assert.equal(d.receiveRequest(reinvite), 'ok');
    assert.equal((d.remoteTarget as SipUri).host, '192.0.2.99');
  });

  it('strict routing: the first route becomes the Request-URI, the remote target the last Route', () => {
    const invite = parse(INVITE.replace('Max-Forwards: 70', 'Max-Forwards: 70\r\nRecord-Route: <sip:strict.example.org>'));
    const ok = createResponse(invite, 200, undefined, { toTag: 't' });
    ok.add('Contact', '<sip:bob@192.0.2.4>');
    const d = Dialog.asUas(invite, ok)!;
    const bye = d.createRequest('BYE');
    assert.equal((bye.uri as SipUri).host, 'strict.example.org');
    assert.deepEqual(bye.getAll('route'), ['<sip:alice@192.0.2.10:5060;transport=udp>']);
  });

  it('CSeq rules: a lower CSeq is refused (500), higher ones advance', () => {
    const invite = parse(INVITE);
    const ok = createResponse(invite, 200, undefined, { toTag: 't' });
    const d = Dialog.asUas(invite, ok)!;
    const req = (seq: number, method = 'BYE'): SipRequest => new SipRequest(method, 'sip:x@y', [['CSeq', `${seq} ${method}`]]);
    assert.equal(d.receiveRequest(req(314158)), 'lower');
    assert.equal(d.receiveRequest(req(314160, 'INFO')), 'ok');
    assert.equal(d.remoteSeq, 314160);
    assert.equal(d.receiveRequest(req(314159)), 'lower');
    assert.equal(d.receiveRequest(req(1, 'ACK')), 'ok', 'ACK and CANCEL are not checked');
  });

  it('an early dialog from a 180 is confirmed by the 2xx', () => {
    const invite = parse(INVITE);
    const ringing = createResponse(invite, 180, undefined, { toTag: 'far' });
    ringing.add('Contact', '<sip:bob@192.0.2.4>');
    const d = Dialog.asUac(invite, ringing)!;
    assert.equal(d.state, 'early');
    const ok = createResponse(invite, 200, undefined, { toTag: 'far' });
    ok.add('Contact', '<sip:bob@192.0.2.5>');
    d.updateFromResponse(ok);
    assert.equal(d.state, 'confirmed');
    assert.equal((d.remoteTarget as SipUri).host, '192.0.2.5');
  });

  it('the table is bounded and matches incoming requests by Call-ID and tags', () => {
    const table = new DialogTable(2);
    const make = (n: number): Dialog => {
      const invite = parse(INVITE.replace(/Call-ID: .*/, `Call-ID: c${n}`));
      return Dialog.asUas(invite, createResponse(invite, 200, undefined, { toTag: `t${n}` }))!;
    };
    assert.ok(table.add(make(1)));
    assert.ok(table.add(make(2)));
    assert.equal(table.add(make(3)), false);
    const bye = new SipRequest('BYE', 'sip:x@y', [['Call-ID', 'c2'], ['From', '<sip:alice@example.com>;tag=1928301774'], ['To', '<sip:bob@x>;tag=t2'], ['CSeq', '1 BYE']]);
    const d = table.match(bye)!;
    assert.equal(d.callId, 'c2');
    table.delete(d);
    assert.equal(table.size, 1);
  });
});

describe('a call between two stacks over UDP', () => {
  const stacks: Stack[] = [];
  after(async () => {
    for (const s of stacks) await s.close();
  });

  it('INVITE → 180 → 200 → ACK (dialog) → BYE (dialog) → 200; tables empty afterwards', async () => {
    const uasDialogs = new DialogTable();
    let acked = false;
    let byeSeen = false;
    const uas: Stack = await startStack({
      onRequest(request, tx) {
        const existing = uasDialogs.match(request);
        if (existing) {
          if (existing.receiveRequest(request) === 'lower') return void tx.reply(500);
          if (request.method === 'BYE') {
            byeSeen = true;
            uasDialogs.delete(existing);
          }
          return void tx.reply(200);
        }
        if (request.method !== 'INVITE') return void tx.reply(481);
        tx.reply(180);
        const ok = tx.createResponse(200);
        ok.add('Contact', `<sip:uas@127.0.0.1:${uas.udpPort}>`);
        uasDialogs.add(Dialog.asUas(request, ok)!);
        tx.respond(ok);
      },
      onAck: () => (acked = true),
    });
    stacks.push(uas);
    const uac = await startStack({ onRequest: (_r, tx) => void tx.reply(481) });
    stacks.push(uac);
    const invite = new SipRequest('INVITE', `sip:uas@127.0.0.1:${uas.udpPort}`, [
      ['From', '<sip:uac@127.0.0.1>;tag=uac1'],
      ['To', `<sip:uas@127.0.0.1:${uas.udpPort}>`],
      ['Call-ID', 'two-stacks'],
      ['CSeq', '10 INVITE'],
      ['Contact', `<sip:uac@127.0.0.1:${uac.udpPort}>`],
    ]);
    let dialog: Dialog | undefined;
    const statuses: number[] = [];
    uac.layer.sendRequest(invite, { transport: 'UDP', host: '127.0.0.1', port: uas.udpPort }, {
      onResponse(r: SipResponse) {
        statuses.push(r.status);
        if (r.status === 200 && !dialog) dialog = Dialog.asUac(invite, r);
      },
    });
    await waitUntil(() => dialog !== undefined);
    await uac.layer.sendAck(dialog!.createAck(10), dialog!.nextHop()!);
    await waitUntil(() => acked);
    let byeStatus = 0;
    uac.layer.sendRequest(dialog!.createRequest('BYE'), dialog!.nextHop()!, { onResponse: (r) => (byeStatus = r.status) });
    await waitUntil(() => byeStatus === 200 && byeSeen);
    // A 2xx retransmitted before the ACK reached the UAS (a loaded machine) is the same answer again.
    assert.deepEqual(statuses.filter((s, i) => s !== 100 && s !== statuses[i - 1]), [180, 200]);
    assert.equal(uasDialogs.size, 0);
    await waitUntil(() => uac.layer.size === 0 && uas.layer.size === 0, 3000, 'all transactions ended');
  });
});
