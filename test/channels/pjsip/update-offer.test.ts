// An UPDATE carrying an SDP offer in a call (RFC 3311 §5.2) is answered in its 2xx, as a re-INVITE
// is, and its media takes effect (here: hold); before, the offer was ignored and the 200 carried no
// answer, leaving the far end's offer unanswered (found by the live hostile sweep). An UPDATE
// without SDP still only refreshes the session; one whose body is not SDP gets 415, an unusable
// offer 4xx, and the call goes on.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { HostilePeer, plainSdp, statusOf, type PeerDialog } from '../../helpers/hostile-peer.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let dir: string;
let server: TestServer;
let peer: HostilePeer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-update-offer-'));
  const dialplan = join(dir, 'extensions.conf');
  writeFileSync(dialplan, '[default]\nexten => hold,1,Answer()\n same => n,Wait(60)\n');
  server = await startTestServer({ dialplan: { file: dialplan }, config_objects: { res_pjsip: { endpoint: { anonymous: { context: 'default', allow: 'ulaw' } } } } });
  peer = await HostilePeer.open('UDP', server.core.pjsip.port);
});

after(async () => {
  peer?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('an UPDATE offer is answered in the 200; without SDP it refreshes only; a body not SDP is 415', async () => {
  const dialog = (await peer.call()) as PeerDialog;
  assert.equal(typeof dialog, 'object', 'the call was answered');
  const hold = await peer.request(peer.inDialog(dialog, { method: 'UPDATE', body: plainSdp(40200).replace('a=sendrecv', 'a=sendonly') }));
  assert.equal(hold && statusOf(hold), 200);
  assert.match(hold ?? '', /^Content-Type: application\/sdp/im);
  assert.match(hold ?? '', /^a=recvonly/m, 'the answer to a sendonly offer');
  assert.match(hold ?? '', /^m=audio \d+ RTP\/AVP 0/m);

  const refresh = await peer.request(peer.inDialog(dialog, { method: 'UPDATE' }));
  assert.equal(refresh && statusOf(refresh), 200);
  assert.match(refresh ?? '', /^Content-Length:\s*0/im);

  const text = await peer.request(peer.inDialog(dialog, { method: 'UPDATE', body: 'hello', contentType: 'text/plain' }));
  assert.equal(text && statusOf(text), 415);
  const garbage = await peer.request(peer.inDialog(dialog, { method: 'UPDATE', body: 'v=0\r\nm=audio x\r\n' }));
  const garbageStatus = garbage ? statusOf(garbage) : 0;
  assert.ok(garbageStatus >= 400 && garbageStatus < 500, `an unusable offer got ${garbageStatus}`);

  assert.equal(await peer.hangUp(dialog), 200, 'the call went on');
});
