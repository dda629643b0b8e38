// CallDialogRequests (src/channels/pjsip/call-dialog-requests.ts) lending its dialog to another
// usage, a REFER's subscription: the usage's requests go out after the call ended, the call's BYE
// waits for the usage's release, and at most HELD_BYE_MS (Asterisk's 60 s deferred session end);
// a usage still live after that BYE goes on sending in the dialog (Asterisk's REFER subscription
// keeps pjsip's dialog past the BYE), a released one sends nothing. A REFER's deferred termination (Asterisk's
// ast_sip_session_defer_termination) leaves the BYE to the far end for TERMINATION_DEFERRAL_MS.
import assert from 'node:assert/strict';
import { describe, mock, test } from 'node:test';
import { CallDialogRequests, HELD_BYE_MS, TERMINATION_DEFERRAL_MS, type DialogRoute } from '../../../src/channels/pjsip/call-dialog-requests.ts';
import { Dialog } from '../../../src/sip/dialog.ts';
import type { SipRequest } from '../../../src/sip/message.ts';
import { parseUri } from '../../../src/sip/uri.ts';

function setUp(): { requests: CallDialogRequests; sent: string[]; reasons: Array<string | undefined>; route: { ended: boolean; dialog: Dialog } } {
  const sent: string[] = [];
  const reasons: Array<string | undefined> = [];
  const remoteTarget = parseUri('sip:alice@127.0.0.1:5099');
  assert.ok(remoteTarget);
  const dialog = new Dialog({ callId: 'c1', localTag: 'l', remoteTag: 'r', localParty: '<sip:pbx@127.0.0.1>;tag=l', remoteParty: '<sip:alice@127.0.0.1>;tag=r', localSeq: 1, remoteTarget, routeSet: [], secure: false, state: 'confirmed' });
  const route = { dialog, ended: false, signallingTransport: 'UDP' as const, signallingListener: undefined, signallingConnection: undefined, relayedFlow: undefined };
  const layer = {
    sendRequest: (request: SipRequest) => {
      sent.push(request.method);
      reasons.push(request.get('reason'));
    },
    sendAck: async () => undefined,
  };
  const log = { debug: () => undefined };
  const requests = new CallDialogRequests({ layer, log } as never, route satisfies DialogRoute);
  return { requests, sent, reasons, route };
}

describe('CallDialogRequests: a usage holds the BYE back', () => {
  test('the BYE waits for the release; the usage sends after the call ended, not after the BYE', () => {
    const { requests, sent, route } = setUp();
    const usage = requests.usage();
    assert.ok(usage);
    route.ended = true;
    requests.bye(16);
    assert.deepEqual(sent, [], 'no BYE while the subscription lasts');
    assert.equal(requests.send('INFO', []), false, 'the call itself sends nothing once ended');
    assert.equal(usage.send('NOTIFY', []), true);
    usage.release();
    usage.release();
    assert.deepEqual(sent, ['NOTIFY', 'BYE']);
    assert.equal(usage.send('NOTIFY', []), false);
  });

  test(`bounded: the held BYE goes after ${HELD_BYE_MS / 1000} s; the usage still live goes on notifying after it, as Asterisk's`, () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const { requests, sent } = setUp();
      const usage = requests.usage();
      assert.ok(usage);
      requests.bye(16);
      mock.timers.tick(HELD_BYE_MS - 1);
      assert.deepEqual(sent, []);
      mock.timers.tick(1);
      assert.deepEqual(sent, ['BYE']);
      assert.equal(usage.send('NOTIFY', []), true, 'the subscription outlives our BYE');
      assert.equal(requests.send('INFO', []), false, 'the call itself sends nothing after its BYE');
      usage.release();
      assert.equal(usage.send('NOTIFY', []), false, 'nothing once released');
      assert.deepEqual(sent, ['BYE', 'NOTIFY'], 'one BYE');
    } finally {
      mock.timers.reset();
    }
  });
});

describe('CallDialogRequests: a REFER\'s deferred termination leaves the BYE to the far end', () => {
  test(`the BYE asked for waits ${TERMINATION_DEFERRAL_MS / 1000} s from the REFER, past the subscription's end, and goes without Reason`, () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const { requests, sent, reasons } = setUp();
      const deferral = requests.deferTermination();
      assert.ok(deferral);
      assert.equal(requests.deferTermination(), undefined, 'one deferral at a time');
      const usage = requests.usage();
      assert.ok(usage);
      mock.timers.tick(1000);
      requests.bye(16);
      let settled = false;
      requests.onByeSettled(() => (settled = true));
      assert.equal(requests.holdingBye, true);
      usage.send('NOTIFY', []);
      usage.release();
      assert.deepEqual(sent, ['NOTIFY'], 'the last NOTIFY, no BYE: the phone hangs up itself');
      mock.timers.tick(TERMINATION_DEFERRAL_MS - 1001);
      assert.deepEqual(sent, ['NOTIFY']);
      assert.equal(settled, false);
      mock.timers.tick(1);
      assert.deepEqual(sent, ['NOTIFY', 'BYE']);
      assert.equal(reasons[1], undefined);
      assert.equal(settled, true);
      deferral.cancel();
      assert.deepEqual(sent, ['NOTIFY', 'BYE'], 'one BYE');
    } finally {
      mock.timers.reset();
    }
  });

  test('the far end\'s BYE settles it: none of ours, then or later', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const { requests, sent } = setUp();
      requests.deferTermination();
      requests.bye(16);
      let settled = false;
      requests.onByeSettled(() => (settled = true));
      requests.endedByFarEnd();
      assert.equal(settled, true);
      assert.equal(requests.holdingBye, false);
      mock.timers.tick(TERMINATION_DEFERRAL_MS);
      assert.deepEqual(sent, []);
    } finally {
      mock.timers.reset();
    }
  });

  test('a transfer that failed cancels it: a BYE asked for meanwhile goes at once, with its Reason; later ones are not held', () => {
    const { requests, sent, reasons } = setUp();
    const deferral = requests.deferTermination();
    assert.ok(deferral);
    requests.bye(16);
    assert.deepEqual(sent, []);
    deferral.cancel();
    assert.deepEqual(sent, ['BYE']);
    assert.equal(reasons[0], 'Q.850;cause=16');
  });

  test('without a BYE asked for, the deferral ends quietly and the call goes on', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const { requests, sent } = setUp();
      requests.deferTermination();
      mock.timers.tick(TERMINATION_DEFERRAL_MS);
      assert.deepEqual(sent, []);
      requests.bye(16);
      assert.deepEqual(sent, ['BYE'], 'a hangup after it sends its BYE at once');
    } finally {
      mock.timers.reset();
    }
  });
});
