// The cases of the live hostile-input sweep (live-sweep.test.ts): each drives a real dialog (or a
// request outside one) on a started server into an odd state with hostile content. A case only
// sends and reads; the runner checks after it that the server still answers, logged no crash,
// holds nothing, and answered no malformed message with 5xx.
import { randomToken } from '../../helpers/sip-inbox.ts';
import { plainSdp, statusOf, type HostilePeer, type PeerDialog } from '../../helpers/hostile-peer.ts';
import { HOSTILE_SDP, pick, type Random } from './live-sweep-sdp.ts';

export interface SweepContext {
  readonly peer: HostilePeer;
  readonly random: Random;
  /** The most bytes a body may take on this transport. */
  readonly budget: number;
  /** Notes a wrong answer (the case goes on). */
  finding(what: string): void;
}

export interface SweepCase {
  readonly name: string;
  /** RFC 3261 asks for a 5xx here (a request out of order: 500), so a 5xx is no finding. */
  readonly allow5xx?: boolean;
  run(context: SweepContext): Promise<void>;
}

/** A confirmed call to `hold` (Answer, Wait), or undefined with a finding. */
async function callUp(context: SweepContext): Promise<PeerDialog | undefined> {
  const dialog = await context.peer.call();
  if (typeof dialog === 'number') {
    context.finding(`a plain INVITE was not answered 200 (${dialog || 'no answer'})`);
    return undefined;
  }
  return dialog;
}

/** Runs `body` inside a call that is hung up afterwards; the BYE must get 200 (the dialog survived). */
async function inCall(context: SweepContext, body: (dialog: PeerDialog) => Promise<void>): Promise<void> {
  const dialog = await callUp(context);
  if (!dialog) return;
  await body(dialog);
  const status = await context.peer.hangUp(dialog);
  if (status !== 200) context.finding(`the BYE after the case got ${status || 'no answer'}`);
}

/** A re-INVITE (or UPDATE) with `sdp`; a 2xx is ACKed. The final status, 0 without one. */
async function reoffer(context: SweepContext, dialog: PeerDialog, method: 'INVITE' | 'UPDATE', sdp: string, headers: readonly string[] = []): Promise<number> {
  const parts = context.peer.inDialog(dialog, { method, body: sdp, headers });
  const final = await context.peer.request(parts);
  const status = final ? statusOf(final) : 0;
  if (method === 'INVITE' && status >= 200 && status < 300) context.peer.ack(dialog, Number(parts.cseq));
  return status;
}

function hostileSdpCases(): SweepCase[] {
  const cases: SweepCase[] = [];
  for (const [name, build] of Object.entries(HOSTILE_SDP)) {
    cases.push({
      name: `INVITE with hostile SDP: ${name}`,
      async run(context) {
        const outcome = await context.peer.call('hold', build(context.random, context.budget));
        if (typeof outcome !== 'number') await context.peer.hangUp(outcome);
      },
    });
    cases.push({
      name: `re-INVITE with hostile SDP: ${name}`,
      run: (context) => inCall(context, (dialog) => reoffer(context, dialog, 'INVITE', build(context.random, context.budget)).then(() => undefined)),
    });
    cases.push({
      name: `UPDATE with hostile SDP: ${name}`,
      run: (context) => inCall(context, (dialog) => reoffer(context, dialog, 'UPDATE', build(context.random, context.budget)).then(() => undefined)),
    });
  }
  return cases;
}

const REFER_TO = [
  (port: number) => `<sip:nobody@127.0.0.1:${port}?Replaces=unknown-call%3Bto-tag%3Dx%3Bfrom-tag%3Dy>`,
  (port: number) => `<sip:hold@127.0.0.1:${port}?Replaces=%25253Bto-tag%25253D%252525>`,
  (port: number) => `<sip:hold@127.0.0.1:${port}?Replaces=${'%41'.repeat(1500)}>`,
  () => '<>',
  () => '<sip:>',
  () => '<tel:+1' + '9'.repeat(3000) + '>',
  () => 'sip:no-brackets@127.0.0.1?Replaces=a;to-tag=b',
  () => '<sip:a@b?Replaces=x%3Bto-tag%3D%3Bfrom-tag%3D&Replaces=y&Require=replaces>',
  () => '<http://evil.example/>',
  () => '<sip:a@[::zz]:99999>',
];

export function sweepCases(serverPort: number): SweepCase[] {
  return [
    ...hostileSdpCases(),
    {
      name: 'UPDATE without an offer, PRACK for nothing and PRACK with a garbled RAck',
      run: (context) =>
        inCall(context, async (dialog) => {
          const { peer } = context;
          await peer.request(peer.inDialog(dialog, { method: 'UPDATE' }));
          await peer.request(peer.inDialog(dialog, { method: 'PRACK', headers: ['RAck: 1 1 INVITE'] }));
          await peer.request(peer.inDialog(dialog, { method: 'PRACK', headers: [`RAck: ${pick(context.random, ['x y z', '99999999999 -1 INVITE', '', '1 1'])}`] }));
          await peer.request(peer.inDialog(dialog, { method: 'PRACK' }));
        }),
    },
    {
      name: 'PRACK and UPDATE before the INVITE is answered (out of order, RFC 3262/3311)',
      async run(context) {
        const { peer } = context;
        const fromTag = randomToken();
        const sent = peer.send({ method: 'INVITE', uri: `sip:hold@127.0.0.1:${serverPort}`, fromTag, body: plainSdp(40000), headers: ['Supported: 100rel'] });
        await peer.request({ method: 'PRACK', callId: sent.callId, fromTag, toTag: 'guess', headers: ['RAck: 7 1 INVITE'] });
        await peer.request({ method: 'UPDATE', callId: sent.callId, fromTag, toTag: 'guess', body: plainSdp(40002) });
        const final = await peer.finalFor(sent.callId, sent.cseq, 'INVITE', 15_000);
        if (final && statusOf(final) < 300) {
          const toTag = /^To:.*;tag=([^;\s>]+)/im.exec(final)?.[1] ?? '';
          const dialog: PeerDialog = { callId: sent.callId, localTag: fromTag, remoteTag: toTag, target: /<([^>]+)>/.exec(/^Contact:(.*)$/im.exec(final)?.[1] ?? '')?.[1] ?? '', inviteBranch: sent.branch, inviteCseq: Number(sent.cseq), cseq: Number(sent.cseq) };
          peer.ack(dialog, dialog.inviteCseq);
          await peer.hangUp(dialog);
        }
      },
    },
    {
      name: 'CANCEL after the 200',
      run: (context) =>
        inCall(context, async (dialog) => {
          await context.peer.request({ method: 'CANCEL', uri: `sip:hold@127.0.0.1:${serverPort}`, callId: dialog.callId, fromTag: dialog.localTag, branch: dialog.inviteBranch, cseq: dialog.inviteCseq });
        }),
    },
    {
      name: 'BYE with wrong tags, ACK for nothing',
      run: (context) =>
        inCall(context, async (dialog) => {
          const { peer } = context;
          for (const [fromTag, toTag] of [[dialog.localTag, 'wrong'], ['wrong', dialog.remoteTag], [dialog.localTag, '']]) {
            const final = await peer.request(peer.inDialog(dialog, { method: 'BYE', fromTag, toTag: toTag || undefined }));
            if (final && statusOf(final) < 300) context.finding(`a BYE with tags ${fromTag}/${toTag || '(none)'} ended the call`);
          }
          peer.send({ method: 'ACK', callId: `nothing-${randomToken()}`, toTag: 'x' });
          peer.send(peer.inDialog(dialog, { method: 'ACK', cseq: 999 }));
          peer.send({ method: 'ACK', callId: dialog.callId, fromTag: dialog.localTag, cseq: dialog.inviteCseq });
        }),
    },
    {
      name: 'INFO with huge and hostile bodies',
      run: (context) =>
        inCall(context, async (dialog) => {
          const { peer, random, budget } = context;
          const bodies: Array<[string, string]> = [
            ['application/dtmf-relay', `Signal=${'x'.repeat(budget - 200)}\r\nDuration=160\r\n`],
            ['application/dtmf-relay', `Signal=${pick(random, ['99999', '', '#*#', '\u0000'])}\r\nDuration=${pick(random, ['-1', '99999999999999', 'x'])}\r\n`],
            ['application/dtmf', pick(random, ['', '99', 'Signal=1'])],
            ['application/media_control+xml', `<?xml version="1.0"?>${'<a>'.repeat(3000)}`],
            ['text/plain', 'y'.repeat(budget - 200)],
          ];
          for (const [contentType, body] of bodies) await peer.request(peer.inDialog(dialog, { method: 'INFO', contentType, body }));
        }),
    },
    {
      name: 'REFER with hostile Refer-To and Replaces',
      run: (context) =>
        inCall(context, async (dialog) => {
          const { peer, random } = context;
          const own = `<sip:hold@127.0.0.1:${serverPort}?Replaces=${encodeURIComponent(`${dialog.callId};to-tag=${dialog.remoteTag};from-tag=${dialog.localTag}`)}>`;
          for (const referTo of [pick(random, REFER_TO)(serverPort), own]) {
            await peer.request(peer.inDialog(dialog, { method: 'REFER', headers: [`Refer-To: ${referTo}`, `Referred-By: <sip:${'r'.repeat(Math.floor(random() * 3000))}@x>`] }));
          }
          await peer.request(peer.inDialog(dialog, { method: 'REFER' }));
          await peer.request(peer.inDialog(dialog, { method: 'REFER', headers: ['Refer-To: <sip:a@b>', 'Refer-To: <sip:c@d>'] }));
        }),
    },
    {
      name: 'SUBSCRIBE and NOTIFY with odd Event and Expires',
      async run(context) {
        const { peer, random } = context;
        const event = pick(random, ['', 'presence', 'dialog', 'message-summary', 'refer;id=-1', 'no-such-package', 'presence;' + 'p=1;'.repeat(1000), 'x'.repeat(5000)]);
        const expires = pick(random, ['-1', '0', '99999999999999999999', 'abc', '', '4294967296']);
        for (const user of ['hold', 'alice']) {
          const final = await peer.request({ method: 'SUBSCRIBE', uri: `sip:${user}@127.0.0.1:${serverPort}`, headers: [...(event ? [`Event: ${event}`] : []), `Expires: ${expires}`, 'Accept: application/pidf+xml'] });
          const toTag = final ? /^To:.*;tag=([^;\s>]+)/im.exec(final)?.[1] : undefined;
          if (final && statusOf(final) < 300 && toTag) {
            const callId = /^Call-ID:\s*(\S+)/im.exec(final)?.[1] ?? '';
            const fromTag = /^From:.*;tag=([^;\s>]+)/im.exec(final)?.[1] ?? '';
            await peer.request({ method: 'SUBSCRIBE', callId, fromTag, toTag, uri: `sip:${user}@127.0.0.1:${serverPort}`, headers: [`Event: ${event}`, 'Expires: 0'] });
          }
        }
        await peer.request({ method: 'NOTIFY', headers: [`Event: ${event || 'refer'}`, `Subscription-State: ${pick(random, ['active;expires=-1', 'terminated;reason=' + 'z'.repeat(2000), 'garbage', ''])}`], contentType: 'message/sipfrag', body: 'SIP/2.0 200 OK\r\n' });
        await inCall(context, async (dialog) => {
          await peer.request(peer.inDialog(dialog, { method: 'NOTIFY', headers: ['Event: refer;id=abc', 'Subscription-State: active'], contentType: 'message/sipfrag', body: 'SIP/2.0 9999 Weird\r\n' }));
          await peer.request(peer.inDialog(dialog, { method: 'SUBSCRIBE', headers: ['Event: refer', `Expires: ${expires}`] }));
        });
      },
    },
    {
      name: 'a subscription driven into odd states (RFC 6665)',
      async run(context) {
        const { peer, random } = context;
        for (const event of ['presence', 'dialog', 'message-summary']) {
          const uri = `sip:alice@127.0.0.1:${serverPort}`;
          const accept = { presence: 'application/pidf+xml', dialog: 'application/dialog-info+xml', 'message-summary': 'application/simple-message-summary' }[event];
          const first = peer.send({ method: 'SUBSCRIBE', uri, toUser: 'alice', headers: [`Event: ${event}`, 'Expires: 60', `Accept: ${accept}`] });
          const final = await peer.finalFor(first.callId, first.cseq, 'SUBSCRIBE');
          const toTag = final ? /^To:.*;tag=([^;\s>]+)/im.exec(final)?.[1] : undefined;
          if (!final || statusOf(final) >= 300 || !toTag) continue;
          const fromTag = /^From:.*;tag=([^;\s>]+)/im.exec(final)?.[1] ?? '';
          const target = /<([^>]+)>/.exec(/^Contact:(.*)$/im.exec(final)?.[1] ?? '')?.[1] ?? uri;
          const dialog: PeerDialog = { callId: first.callId, localTag: fromTag, remoteTag: toTag, target, inviteBranch: '', inviteCseq: Number(first.cseq), cseq: Number(first.cseq) };
          const odd = [
            { method: 'SUBSCRIBE', toUser: 'alice', headers: [`Event: ${event}`, `Expires: ${pick(random, ['99999999999', '4294967296', '-1', 'x', '1'])}`] },
            { method: 'SUBSCRIBE', toUser: 'alice', headers: ['Event: no-such-package', 'Expires: 60'] },
            { method: 'SUBSCRIBE', toUser: 'alice', headers: [`Event: ${event};id=${'i'.repeat(3000)}`, 'Expires: 60'] },
            { method: 'NOTIFY', toUser: 'alice', headers: [`Event: ${event}`, 'Subscription-State: active;expires=60'], contentType: accept, body: '<x/>' },
            { method: 'BYE', toUser: 'alice' },
            { method: 'INVITE', toUser: 'alice', body: plainSdp(40060) },
            { method: 'INFO', toUser: 'alice', body: 'y'.repeat(2000), contentType: 'text/plain' },
          ];
          for (const parts of odd) {
            const request = peer.inDialog(dialog, parts);
            const answer = await peer.request(request);
            if (parts.method === 'INVITE' && answer && statusOf(answer) < 300) {
              peer.ack(dialog, Number(request.cseq));
              await peer.hangUp(dialog);
            }
          }
          await peer.request(peer.inDialog(dialog, { method: 'SUBSCRIBE', toUser: 'alice', headers: [`Event: ${event}`, 'Expires: 0'] }));
        }
      },
    },
    {
      name: 'session timers with Session-Expires 0, 1, huge and garbage',
      async run(context) {
        const { peer, random } = context;
        const value = pick(random, ['0', '1', '89', '99999999999999999999', 'abc', '1800;refresher=nobody', '-5', '']);
        const minSe = pick(random, ['0', '99999999999', 'x', '90']);
        const headers = ['Supported: timer', `Session-Expires: ${value}`, `Min-SE: ${minSe}`];
        const outcome = await peer.call('hold', plainSdp(40000), headers);
        if (typeof outcome !== 'number') await peer.hangUp(outcome);
        await inCall(context, (dialog) => reoffer(context, dialog, pick(random, ['INVITE', 'UPDATE'] as const), plainSdp(40004), headers).then(() => undefined));
      },
    },
    {
      name: 'CSeq huge and garbled',
      run: (context) =>
        inCall(context, async (dialog) => {
          const { peer, random } = context;
          await peer.request(peer.inDialog(dialog, { method: 'INFO', cseq: pick(random, ['4294967296', '99999999999999999999', '-1', 'abc', '1.5']) }));
        }),
    },
    {
      name: 'CSeq rolled back in a dialog (RFC 3261 §12.2.2: 500)',
      allow5xx: true,
      run: (context) =>
        inCall(context, async (dialog) => {
          const { peer } = context;
          await peer.request(peer.inDialog(dialog, { method: 'INFO', cseq: dialog.inviteCseq + 50 }));
          dialog.cseq = dialog.inviteCseq + 50;
          await peer.request(peer.inDialog(dialog, { method: 'INFO', cseq: 0 }));
        }),
    },
    {
      name: 'Max-Forwards 0 in and out of a dialog',
      run: (context) =>
        inCall(context, async (dialog) => {
          const { peer } = context;
          await peer.request({ method: 'OPTIONS', maxForwards: 0 });
          await peer.request(peer.inDialog(dialog, { method: 'INFO', maxForwards: pick(context.random, ['0', '-1', '256', 'x']) }));
        }),
    },
    {
      name: 'many Via, Route and Record-Route',
      async run(context) {
        const { peer, random, budget } = context;
        const count = Math.floor(budget / 80);
        const via = Array.from({ length: count }, (_, i) => `Via: SIP/2.0/UDP 10.0.${i >> 8}.${i & 255}:5060;branch=z9hG4bK${i}`);
        await peer.request({ method: 'OPTIONS', headers: via.slice(0, 200) });
        await peer.request({ method: 'OPTIONS', headers: [`Route: ${Array.from({ length: count }, (_, i) => `<sip:10.0.0.${i & 255};lr>`).join(',')}`] });
        const recordRoute = Array.from({ length: Math.min(count, 200) }, (_, i) => `Record-Route: <sip:proxy${i}.example;lr${pick(random, ['', ';transport=tcp', ';x=' + 'y'.repeat(30)])}>`);
        const outcome = await peer.call('hold', plainSdp(40000), recordRoute);
        if (typeof outcome !== 'number') await peer.hangUp(outcome);
      },
    },
    {
      name: 'a re-INVITE while another is pending, and a BYE racing it',
      allow5xx: true,
      run: (context) =>
        inCall(context, async (dialog) => {
          const { peer } = context;
          // RFC 3261 §14.2: the second offer while one is pending gets 500 (with Retry-After) or 491.
          const first = peer.inDialog(dialog, { method: 'INVITE', body: plainSdp(40010) });
          const second = peer.inDialog(dialog, { method: 'INVITE', body: plainSdp(40012) });
          const [a, b] = await Promise.all([peer.request(first), peer.request(second)]);
          for (const [parts, final] of [[first, a], [second, b]] as const) if (final && statusOf(final) < 300) peer.ack(dialog, Number(parts.cseq));
          await peer.request(peer.inDialog(dialog, { method: 'UPDATE', body: plainSdp(40014) }));
        }),
    },
    {
      name: 'requests that belong to no dialog (481) and an INVITE looped back with the same tags (482)',
      async run(context) {
        const { peer, random } = context;
        for (const method of ['BYE', 'INFO', 'UPDATE', 'PRACK', 'REFER', 'NOTIFY', 'CANCEL']) {
          await peer.request({ method, toTag: randomToken(), headers: method === 'PRACK' ? ['RAck: 1 1 INVITE'] : method === 'REFER' ? ['Refer-To: <sip:x@y>'] : [] });
        }
        await inCall(context, async (dialog) => {
          // The same Call-ID, From tag and CSeq as the dialog's INVITE, another branch: a merged request.
          await peer.request({ method: 'INVITE', callId: dialog.callId, fromTag: dialog.localTag, cseq: dialog.inviteCseq, body: plainSdp(40020) });
          // Another CSeq and still no To tag: a new INVITE with a reused Call-ID (legal, RFC 3261 §8.1.3.5): a second call.
          const again = peer.send({ method: 'INVITE', callId: dialog.callId, fromTag: dialog.localTag, cseq: pick(random, [dialog.inviteCseq + 1, 0]), body: plainSdp(40020) });
          const final = await peer.finalFor(again.callId, again.cseq, 'INVITE', 15_000);
          if (final && statusOf(final) < 300) {
            const second: PeerDialog = { ...dialog, remoteTag: /^To:.*;tag=([^;\s>]+)/im.exec(final)?.[1] ?? '', inviteCseq: Number(again.cseq), cseq: Number(again.cseq) };
            peer.ack(second, second.inviteCseq);
            await peer.hangUp(second);
          }
        });
      },
    },
    {
      name: 'INVITE with hostile Replaces and Require',
      async run(context) {
        const { peer, random } = context;
        const replaces = pick(random, ['unknown-call;to-tag=x;from-tag=y', ';;;', 'x'.repeat(5000), 'a;to-tag=;from-tag=;early-only', '%00;to-tag=%zz']);
        const outcome = await peer.call('hold', plainSdp(40000), [`Replaces: ${replaces}`, 'Supported: replaces']);
        if (typeof outcome !== 'number') await peer.hangUp(outcome);
        const required = await peer.call('hold', plainSdp(40000), [`Require: ${pick(random, ['no-such-extension', 'timer, 100rel, x-y', ','.repeat(300), 'a'.repeat(3000)])}`]);
        if (typeof required !== 'number') await peer.hangUp(required);
      },
    },
    {
      name: 'INVITE with Replaces naming a live call of the same peer',
      // A call in no two-party call cannot be replaced: 503 (docs/sip.md, a documented difference from Asterisk).
      allow5xx: true,
      run: (context) =>
        inCall(context, async (dialog) => {
          const own = await context.peer.call('hold', plainSdp(40030), [`Replaces: ${dialog.callId};to-tag=${dialog.remoteTag};from-tag=${dialog.localTag}`]);
          if (typeof own !== 'number') await context.peer.hangUp(own);
        }),
    },
    {
      name: 'CANCEL of a ringing call, twice, and an INVITE retransmitted with another body',
      async run(context) {
        const { peer } = context;
        const fromTag = randomToken();
        const invite = peer.build({ method: 'INVITE', uri: `sip:ring@127.0.0.1:${serverPort}`, fromTag, body: plainSdp(40040) });
        peer.sendRaw(invite.text);
        await peer.inbox.next(/^SIP\/2\.0 18\d/, 15_000, (m) => m.includes(invite.callId)).catch(() => undefined);
        // The same branch again with another SDP: a retransmission to the transaction, whatever its body.
        peer.sendRaw(peer.build({ method: 'INVITE', uri: `sip:ring@127.0.0.1:${serverPort}`, fromTag, callId: invite.callId, branch: invite.branch, cseq: invite.cseq, body: plainSdp(40042) }).text);
        const cancel = { method: 'CANCEL', uri: `sip:ring@127.0.0.1:${serverPort}`, callId: invite.callId, fromTag, branch: invite.branch, cseq: invite.cseq };
        await Promise.all([peer.request(cancel), peer.request(cancel)]);
        const final = await peer.finalFor(invite.callId, invite.cseq, 'INVITE', 15_000);
        if (final && statusOf(final) !== 487) context.finding(`the CANCELled INVITE ended ${statusOf(final)}, not 487`);
      },
    },
    {
      name: 'reliable provisional responses never PRACKed (RFC 3262)',
      async run(context) {
        const { peer } = context;
        const sent = peer.send({ method: 'INVITE', uri: `sip:ring@127.0.0.1:${serverPort}`, body: plainSdp(40050), headers: ['Require: 100rel', 'Supported: 100rel'] });
        await peer.inbox.next(/^SIP\/2\.0 18\d/, 15_000, (m) => m.includes(sent.callId)).catch(() => undefined);
        // A PRACK naming an RSeq that was never sent, then nothing: the server gives up on its own.
        await peer.request({ method: 'PRACK', callId: sent.callId, toTag: 'x', headers: ['RAck: 999999 1 INVITE'] });
        await peer.request({ method: 'CANCEL', uri: `sip:ring@127.0.0.1:${serverPort}`, callId: sent.callId, branch: sent.branch, cseq: sent.cseq });
        await peer.finalFor(sent.callId, sent.cseq, 'INVITE', 15_000);
      },
    },
    {
      name: 'a flood of DTMF INFOs in one dialog',
      run: (context) =>
        inCall(context, async (dialog) => {
          const { peer } = context;
          const sent = [];
          for (let i = 0; i < 300; i++) sent.push(peer.send(peer.inDialog(dialog, { method: 'INFO', contentType: 'application/dtmf-relay', body: `Signal=${'0123456789*#ABCD'[i % 16]}\r\nDuration=100\r\n` })));
          const last = sent[sent.length - 1];
          await peer.finalFor(last.callId, last.cseq, 'INFO', 15_000);
        }),
    },
    {
      name: 'multipart bodies',
      async run(context) {
        const { peer, random } = context;
        const boundary = pick(random, ['b1', 'x'.repeat(500), '', '"quoted"']);
        const bodies = [
          `--${boundary}\r\nContent-Type: application/sdp\r\n\r\n${plainSdp(40000)}\r\n--${boundary}\r\nContent-Type: application/isup\r\n\r\n\u0000\u0001\r\n--${boundary}--\r\n`,
          `--${boundary}\r\nContent-Type: multipart/mixed;boundary=inner\r\n\r\n--inner\r\nContent-Type: application/sdp\r\n\r\n${plainSdp(40000)}\r\n--inner--\r\n--${boundary}--\r\n`,
          `--${boundary}\r\n`.repeat(3000),
          'no boundary here at all',
        ];
        const body = pick(random, bodies);
        const contentType = pick(random, [`multipart/mixed;boundary=${boundary}`, 'multipart/mixed', 'multipart/alternative;boundary=', `multipart/related;boundary="${boundary}"`]);
        const sent = peer.send({ method: 'INVITE', body, contentType });
        const final = await peer.finalFor(sent.callId, sent.cseq, 'INVITE', 15_000);
        if (final && statusOf(final) < 300) {
          const toTag = /^To:.*;tag=([^;\s>]+)/im.exec(final)?.[1] ?? '';
          const fromTag = /^From:.*;tag=([^;\s>]+)/im.exec(final)?.[1] ?? '';
          const dialog: PeerDialog = { callId: sent.callId, localTag: fromTag, remoteTag: toTag, target: /<([^>]+)>/.exec(/^Contact:(.*)$/im.exec(final)?.[1] ?? '')?.[1] ?? '', inviteBranch: sent.branch, inviteCseq: Number(sent.cseq), cseq: Number(sent.cseq) };
          peer.ack(dialog, dialog.inviteCseq);
          await peer.hangUp(dialog);
        }
      },
    },
  ];
}
