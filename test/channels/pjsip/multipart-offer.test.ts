// An INVITE whose body is multipart/mixed (SDP beside ISUP, as SIP-I gateways send it) is answered
// with its SDP part as the offer, as Asterisk's stack answers it; before, any multipart body got 415
// (found by the live hostile sweep, live-sweep.test.ts). A multipart without an SDP part, or of
// another multipart type, is still 415 with Accept: application/sdp.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainSdp, statusOf, type PeerDialog } from '../../helpers/hostile-peer.ts';
import { sipHeader } from '../../helpers/sip-inbox.ts';
import { useHoldServer } from './hold-server.ts';

const held = useHoldServer('multipart');

const multipart = (sdp: string | undefined): string =>
  ['--sep', 'Content-Type: application/isup;version=itu-t92+', 'Content-Disposition: signal;handling=optional', '', '\u0001\u0010\u0000', ...(sdp === undefined ? [] : ['--sep', 'Content-Type: application/sdp', '', sdp]), '--sep--', ''].join('\r\n');

async function invite(body: string, contentType: string): Promise<string | undefined> {
  const sent = held.peer.send({ method: 'INVITE', body, contentType });
  return held.peer.finalFor(sent.callId, sent.cseq, 'INVITE', 15_000);
}

test('a multipart/mixed INVITE with an SDP part is answered from that part; a multipart re-INVITE too', async () => {
  const final = await invite(multipart(plainSdp(40100)), 'multipart/mixed;boundary=sep');
  assert.equal(final && statusOf(final), 200);
  assert.match(final ?? '', /^m=audio \d+ RTP\/AVP 0/m);
  const dialog: PeerDialog = {
    callId: sipHeader(final!, '(?:call-id|i)')!,
    localTag: /;tag=([^;\s>]+)/.exec(sipHeader(final!, '(?:from|f)')!)![1],
    remoteTag: /;tag=([^;\s>]+)/.exec(sipHeader(final!, '(?:to|t)')!)![1],
    target: /<([^>]+)>/.exec(sipHeader(final!, '(?:contact|m)')!)![1],
    inviteBranch: '',
    inviteCseq: Number(sipHeader(final!, 'cseq')!.split(' ')[0]),
    cseq: Number(sipHeader(final!, 'cseq')!.split(' ')[0]),
  };
  held.peer.ack(dialog, dialog.inviteCseq);
  const reinvite = held.peer.inDialog(dialog, { method: 'INVITE', body: multipart(plainSdp(40102).replace('a=sendrecv', 'a=sendonly')), contentType: 'multipart/alternative; boundary="sep"' });
  const answer = await held.peer.request(reinvite);
  assert.equal(answer && statusOf(answer), 200);
  assert.match(answer ?? '', /^a=recvonly/m, 'the SDP part of the re-INVITE was the offer (hold)');
  held.peer.ack(dialog, Number(reinvite.cseq));
  assert.equal(await held.peer.hangUp(dialog), 200);
});

test('a multipart without an SDP part, or multipart/related, is still 415', async () => {
  for (const [body, type] of [
    [multipart(undefined), 'multipart/mixed;boundary=sep'],
    [multipart(plainSdp(40104)), 'multipart/related;boundary=sep'],
    [multipart(plainSdp(40106)), 'multipart/mixed'],
  ]) {
    const final = await invite(body, type);
    assert.equal(final && statusOf(final), 415, type);
    assert.match(final ?? '', /^Accept: application\/sdp/m);
  }
  assert.equal(held.server.core.channels.list().length, 0);
});
