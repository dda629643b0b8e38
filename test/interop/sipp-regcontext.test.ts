// The global regcontext as a peer sees it: while the SIPp phone alice is registered, the context
// `regs` holds alice,1,Noop(alice) — a call whose dialplan asks DIALPLAN_EXISTS(regs,alice,1) is
// answered — and the extension stays through `dialplan reload`; once alice unregisters
// (Contact: *, Expires: 0) it is gone and the same call is refused 404.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, nextEvent, sipp, sippCall, startSippServer, tracedMessages, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';

const skip = HAVE_SIPP ? false : 'SIPp is not installed';
const APP = 'regcontext-app';

// Answered when the regcontext holds the dialled endpoint's extension (the caller hangs up), else 404 (cause 1).
const DIALPLAN = `[phones]
exten => _[a-z].,1,GotoIf(\${DIALPLAN_EXISTS(regs,\${EXTEN},1)}?online)
 same => n,Hangup(1)
 same => n(online),Answer()
 same => n,Wait(60)
`;

let peer: SippServer;

/** The PeerStatusChange of alice saying `status` (the regcontext follows in the same turn). */
function aliceIs(status: string): Promise<Json> {
  return nextEvent(peer.events, (event) => event.type === 'PeerStatusChange' && event.endpoint?.resource === 'alice' && event.peer?.peer_status === status, 60_000);
}

async function callAnswered(): Promise<void> {
  const run = await sippCall(peer, 'caller', 'call-hangup.xml', 'alice', ['-d', '300']).done;
  assert.equal(run.status, 0, run.output);
}

async function callRefused404(): Promise<void> {
  const run = await sipp('call-expect-refusal.xml', [peer.target(), '-s', 'alice', '-set', 'caller', 'caller'], { cwd: peer.work, timeoutMs: 60_000, trace: true }).done;
  assert.equal(run.status, 0, run.output);
  assert.equal(tracedMessages(run, /^SIP\/2\.0 404/).length > 0, true, run.messages.slice(-1500));
}

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer(
    'regcontext',
    DIALPLAN,
    {
      global: { global: { regcontext: 'regs' } },
      endpoint: {
        alice: { context: 'phones', allow: 'ulaw', aors: 'alice' },
        caller: { context: 'phones', allow: 'ulaw' },
      },
      aor: { alice: { max_contacts: '1' } },
    },
    APP,
  );
  writeSippTone(peer.work, 440, 1, 0.3);
});

after(async () => {
  if (!HAVE_SIPP) return;
  await peer.close();
});

describe('global regcontext', { skip }, () => {
  test('the registered endpoint has its extension in regcontext, through a dialplan reload, and loses it when it unregisters', { timeout: 180_000 }, async () => {
    await callRefused404();

    const online = aliceIs('Reachable');
    const registered = await sipp('register-contact.xml', [peer.target(), '-s', 'alice'], { cwd: peer.work }).done;
    assert.equal(registered.status, 0, registered.output);
    await online;
    await callAnswered();

    const reload = await peer.server.ari('/asterisk/modules/pbx_config.so', { method: 'PUT' });
    assert.equal(reload.status, 204, await reload.text());
    await callAnswered();

    const offline = aliceIs('Unreachable');
    const unregistered = await sipp('register-expires-zero.xml', [peer.target(), '-s', 'alice'], { cwd: peer.work }).done;
    assert.equal(unregistered.status, 0, unregistered.output);
    await offline;
    await callRefused404();
  });
});
