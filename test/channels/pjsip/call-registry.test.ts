// The registry of live SIP calls finds a call by dialog, not by Call-ID alone: the two legs of a
// call Patchbay places to itself share the Call-ID with the tags swapped, and each in-dialog
// request, Replaces value and loop check must land on the right one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { belongsToDialog, Dialog } from '../../../src/sip/dialog.ts';
import { SipRequest } from '../../../src/sip/message.ts';
import { parseUri } from '../../../src/sip/uri.ts';
import { CallRegistry, MAX_CALLS_PER_CALL_ID, type RegisteredCall } from '../../../src/channels/pjsip/call-registry.ts';

const TARGET = parseUri('sip:100@127.0.0.1')!;

function request(method: string, callId: string, tags: { from: string; to?: string }, seq = 1): SipRequest {
  return new SipRequest(method, TARGET, [
    ['From', `<sip:a@127.0.0.1>;tag=${tags.from}`],
    ['To', `<sip:100@127.0.0.1>${tags.to ? `;tag=${tags.to}` : ''}`],
    ['Call-ID', callId],
    ['CSeq', `${seq} ${method}`],
  ]);
}

/** A confirmed leg with these tags; inbound legs keep the INVITE that made them. */
class Leg implements RegisteredCall {
  readonly dialog: Dialog;
  ended = false;
  constructor(
    readonly name: string,
    readonly callId: string,
    localTag: string,
    remoteTag: string,
    readonly inboundInvite: SipRequest | undefined = undefined,
  ) {
    const party = '<sip:x@127.0.0.1>';
    this.dialog = new Dialog({ callId, localTag, remoteTag, localParty: party, remoteParty: party, localSeq: 1, remoteTarget: TARGET, routeSet: [], secure: false, state: 'confirmed' });
  }

  matches(message: SipRequest): boolean {
    return belongsToDialog(message, this.callId, this.dialog.localTag, this.dialog.remoteTag);
  }
}

/** A call to ourselves: the outbound leg (our tag A) and the inbound one (our tag B). */
function selfCall(): { registry: CallRegistry<Leg>; outbound: Leg; inbound: Leg } {
  const registry = new CallRegistry<Leg>();
  const outbound = new Leg('outbound', 'loop@host', 'A', 'B');
  const inbound = new Leg('inbound', 'loop@host', 'B', 'A', request('INVITE', 'loop@host', { from: 'A' }));
  assert.equal(registry.add(outbound), true);
  assert.equal(registry.add(inbound), true);
  return { registry, outbound, inbound };
}

describe('calls found by dialog', () => {
  test('in-dialog requests reach the leg whose local tag is in To', () => {
    const { registry, outbound, inbound } = selfCall();
    assert.equal(registry.size, 2);
    assert.equal(registry.inDialog(request('BYE', 'loop@host', { from: 'A', to: 'B' }, 2)), inbound);
    assert.equal(registry.inDialog(request('BYE', 'loop@host', { from: 'B', to: 'A' }, 2)), outbound);
    assert.equal(registry.inDialog(request('BYE', 'loop@host', { from: 'A', to: 'X' }, 2)), undefined, 'a stale or forged tag');
    assert.equal(registry.inDialog(request('BYE', 'other@host', { from: 'A', to: 'B' }, 2)), undefined);
  });

  test('Replaces names the leg by its tags (to-tag ours, from-tag the far end\'s); an ended leg is not replaced', () => {
    const { registry, outbound, inbound } = selfCall();
    assert.equal(registry.replaced({ callId: 'loop@host', toTag: 'B', fromTag: 'A' }), inbound);
    assert.equal(registry.replaced({ callId: 'loop@host', toTag: 'A', fromTag: 'B' }), outbound);
    assert.equal(registry.replaced({ callId: 'loop@host', toTag: 'A', fromTag: 'A' }), undefined);
    outbound.ended = true;
    assert.equal(registry.replaced({ callId: 'loop@host', toTag: 'A', fromTag: 'B' }), undefined);
  });

  test('a merged request (same Call-ID, From tag and CSeq as an inbound leg\'s INVITE) is told from a new call', () => {
    const { registry } = selfCall();
    assert.equal(registry.isLoop(request('INVITE', 'loop@host', { from: 'A' })), true);
    // The outbound leg's INVITE is no server transaction of ours: only inbound legs count.
    assert.equal(registry.isLoop(request('INVITE', 'loop@host', { from: 'B' })), false);
    assert.equal(registry.isLoop(request('INVITE', 'loop@host', { from: 'A' }, 2)), false);
    assert.equal(registry.isLoop(request('INVITE', 'fresh@host', { from: 'A' })), false);
  });

  test('deleting a leg leaves the other; a Call-ID takes a bounded number of legs', () => {
    const { registry, outbound, inbound } = selfCall();
    registry.delete(outbound);
    registry.delete(outbound);
    assert.equal(registry.size, 1);
    assert.deepEqual([...registry.values()], [inbound]);
    registry.delete(inbound);
    assert.equal(registry.size, 0);
    assert.deepEqual(registry.withCallId('loop@host'), []);
    for (let i = 0; i < MAX_CALLS_PER_CALL_ID; i++) assert.equal(registry.add(new Leg(`fork-${i}`, 'fork@host', `L${i}`, 'R')), true);
    assert.equal(registry.add(new Leg('one-too-many', 'fork@host', 'L', 'R')), false);
    assert.equal(registry.isLoop(request('INVITE', 'fork@host', { from: 'new' })), true, 'a Call-ID with every leg it may have');
    assert.equal(registry.size, MAX_CALLS_PER_CALL_ID);
  });
});
