// CallDialogRequests (src/channels/pjsip/call-dialog-requests.ts) lending its dialog to another
// usage, a REFER's subscription: the usage's requests go out after the call ended, the call's BYE
// waits for the usage's release, and at most HELD_BYE_MS (Asterisk's 60 s deferred session end);
// after that BYE the usage can send nothing more.
import assert from 'node:assert/strict';
import { describe, mock, test } from 'node:test';
import { CallDialogRequests, HELD_BYE_MS, type DialogRoute } from '../../../src/channels/pjsip/call-dialog-requests.ts';
import { Dialog } from '../../../src/sip/dialog.ts';
import type { SipRequest } from '../../../src/sip/message.ts';
import { parseUri } from '../../../src/sip/uri.ts';

function setUp(): { requests: CallDialogRequests; sent: string[]; route: { ended: boolean; dialog: Dialog } } {
  const sent: string[] = [];
  const remoteTarget = parseUri('sip:alice@127.0.0.1:5099');
  assert.ok(remoteTarget);
  const dialog = new Dialog({ callId: 'c1', localTag: 'l', remoteTag: 'r', localParty: '<sip:pbx@127.0.0.1>;tag=l', remoteParty: '<sip:alice@127.0.0.1>;tag=r', localSeq: 1, remoteTarget, routeSet: [], secure: false, state: 'confirmed' });
  const route = { dialog, ended: false, signallingTransport: 'UDP' as const, signallingListener: undefined, signallingConnection: undefined, relayedFlow: undefined };
  const layer = { sendRequest: (request: SipRequest) => void sent.push(request.method), sendAck: async () => undefined };
  const log = { debug: () => undefined };
  const requests = new CallDialogRequests({ layer, log } as never, route satisfies DialogRoute);
  return { requests, sent, route };
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

  test(`bounded: the held BYE goes after ${HELD_BYE_MS / 1000} s, and the usage is over with the dialog`, () => {
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
      assert.equal(usage.send('NOTIFY', []), false);
      usage.release();
      assert.deepEqual(sent, ['BYE'], 'one BYE');
    } finally {
      mock.timers.reset();
    }
  });
});
