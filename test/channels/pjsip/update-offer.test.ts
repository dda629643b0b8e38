// An UPDATE carrying an SDP offer in a call (RFC 3311 §5.2) is answered in its 2xx, as a re-INVITE
// is, and its media takes effect (here: hold); before, the offer was ignored and the 200 carried no
// answer, leaving the far end's offer unanswered (found by the live hostile sweep). An UPDATE
// without SDP still only refreshes the session; one whose body is not SDP gets 415, an unusable
// offer 4xx, and the call goes on. An UPDATE offer while our own offer (in the 200 to an
// offer-less re-INVITE) awaits its answer in the ACK is refused 491 Request Pending (RFC 3311 §5.2;
// before, it was answered and the ACK's answer then met an offer it did not answer).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainSdp, statusOf, type PeerDialog } from '../../helpers/hostile-peer.ts';
import { useHoldServer } from './hold-server.ts';

const held = useHoldServer('update-offer');

test('an UPDATE offer is answered in the 200; without SDP it refreshes only; a body not SDP is 415', async () => {
  const dialog = (await held.peer.call()) as PeerDialog;
  assert.equal(typeof dialog, 'object', 'the call was answered');
  const hold = await held.peer.request(held.peer.inDialog(dialog, { method: 'UPDATE', body: plainSdp(40200).replace('a=sendrecv', 'a=sendonly') }));
  assert.equal(hold && statusOf(hold), 200);
  assert.match(hold ?? '', /^Content-Type: application\/sdp/im);
  assert.match(hold ?? '', /^a=recvonly/m, 'the answer to a sendonly offer');
  assert.match(hold ?? '', /^m=audio \d+ RTP\/AVP 0/m);

  const refresh = await held.peer.request(held.peer.inDialog(dialog, { method: 'UPDATE' }));
  assert.equal(refresh && statusOf(refresh), 200);
  assert.match(refresh ?? '', /^Content-Length:\s*0/im);

  const text = await held.peer.request(held.peer.inDialog(dialog, { method: 'UPDATE', body: 'hello', contentType: 'text/plain' }));
  assert.equal(text && statusOf(text), 415);
  const garbage = await held.peer.request(held.peer.inDialog(dialog, { method: 'UPDATE', body: 'v=0\r\nm=audio x\r\n' }));
  const garbageStatus = garbage ? statusOf(garbage) : 0;
  assert.ok(garbageStatus >= 400 && garbageStatus < 500, `an unusable offer got ${garbageStatus}`);

  assert.equal(await held.peer.hangUp(dialog), 200, 'the call went on');
});

test('an UPDATE offer while our offer in a 200 awaits the ACK is refused 491; after the ACK it is answered', async () => {
  const { peer } = held;
  const dialog = (await peer.call()) as PeerDialog;
  assert.equal(typeof dialog, 'object', 'the call was answered');
  const reinvite = peer.inDialog(dialog, { method: 'INVITE' });
  const ours = await peer.request(reinvite);
  assert.equal(ours && statusOf(ours), 200);
  assert.match(ours ?? '', /^m=audio \d+ RTP\/AVP 0/m, 'our offer in the 200');
  const pending = await peer.request(peer.inDialog(dialog, { method: 'UPDATE', body: plainSdp(40210) }));
  assert.equal(pending && statusOf(pending), 491, 'refused while our offer waits');
  peer.send(peer.inDialog(dialog, { method: 'ACK', cseq: Number(reinvite.cseq), body: plainSdp(40212) }));
  const update = await peer.request(peer.inDialog(dialog, { method: 'UPDATE', body: plainSdp(40214).replace('a=sendrecv', 'a=sendonly') }));
  assert.equal(update && statusOf(update), 200);
  assert.match(update ?? '', /^a=recvonly/m, 'answered once the ACK closed our offer');
  assert.equal(await peer.hangUp(dialog), 200);
});
