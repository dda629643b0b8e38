// ReferProgress (src/channels/pjsip/refer-progress.ts) on its own, over a fake dialog usage: the
// held-back "100 Trying", active and final NOTIFYs in Asterisk's order, and the bounds — the
// subscription's lifetime, a NOTIFY refused (481, an error without Retry-After) or never answered —
// each of which ends it and releases the dialog (the transferer's held BYE).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DialogUsage } from '../../../src/channels/pjsip/call-dialog-requests.ts';
import { ReferProgress } from '../../../src/channels/pjsip/refer-progress.ts';
import { SipResponse } from '../../../src/sip/message.ts';

interface Sent {
  readonly frag: string;
  readonly state: string;
  readonly onFinal?: (response: SipResponse) => void;
  readonly onTimeout?: () => void;
}

function fakeUsage(): { usage: DialogUsage; sent: Sent[]; released: () => number } {
  const sent: Sent[] = [];
  let releases = 0;
  const usage: DialogUsage = {
    send(method, headers, body, _contentType, onFinal, onTimeout) {
      assert.equal(method, 'NOTIFY');
      assert.deepEqual(headers.find(([name]) => name === 'Event'), ['Event', 'refer']);
      sent.push({ frag: (body ?? '').trim(), state: headers.find(([name]) => name === 'Subscription-State')?.[1] ?? '', ...(onFinal ? { onFinal } : {}), ...(onTimeout ? { onTimeout } : {}) });
      return true;
    },
    release() {
      releases++;
    },
  };
  return { usage, sent, released: () => releases };
}

function response(status: number, headers: Array<[string, string]> = []): SipResponse {
  return new SipResponse(status, 'X', headers);
}

describe('ReferProgress: the REFER subscription\'s NOTIFYs', () => {
  test('nothing until news; then 100 Trying first, progress active, the outcome terminated; the dialog released once', () => {
    const { usage, sent, released } = fakeUsage();
    const progress = new ReferProgress(usage, '<sip:patchbay@127.0.0.1>');
    assert.equal(sent.length, 0, 'the 100 Trying is held back');
    progress.progress(180);
    progress.progress(183);
    progress.finish(200);
    progress.finish(503);
    progress.progress(180);
    assert.deepEqual(sent.map((s) => s.frag), ['SIP/2.0 100 Trying', 'SIP/2.0 180 Ringing', 'SIP/2.0 183 Session Progress', 'SIP/2.0 200 OK']);
    assert.match(sent[0].state, /^active;expires=(599|600)$/);
    assert.equal(sent[3].state, 'terminated;reason=noresource');
    assert.equal(released(), 1);
    assert.equal(progress.ended, true);
  });

  test('an outcome reported at once (attended, failed): 100 Trying then it; a first 100 is sent once', () => {
    const failed = fakeUsage();
    new ReferProgress(failed.usage, '<sip:p@h>').finish(404);
    assert.deepEqual(failed.sent.map((s) => [s.frag, s.state]), [
      ['SIP/2.0 100 Trying', failed.sent[0].state],
      ['SIP/2.0 404 Not Found', 'terminated;reason=noresource'],
    ]);
    const proceeding = fakeUsage();
    new ReferProgress(proceeding.usage, '<sip:p@h>').progress(100);
    assert.deepEqual(proceeding.sent.map((s) => s.frag), ['SIP/2.0 100 Trying']);
  });

  test('bounded: the subscription ends at its lifetime with the last status, terminated', async () => {
    const { usage, sent, released } = fakeUsage();
    const progress = new ReferProgress(usage, '<sip:p@h>', 0.2);
    let ended = false;
    progress.onEnd = () => (ended = true);
    progress.progress(180);
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(ended, true);
    assert.equal(released(), 1);
    assert.deepEqual(sent.at(-1)?.frag, 'SIP/2.0 180 Ringing');
    assert.equal(sent.at(-1)?.state, 'terminated;reason=noresource');
  });

  test('a NOTIFY answered 481, or with an error and no Retry-After, or never answered ends the subscription; 2xx and Retry-After do not', () => {
    for (const [answer, ends] of [
      [(s: Sent) => s.onFinal?.(response(200)), false],
      [(s: Sent) => s.onFinal?.(response(503, [['Retry-After', '5']])), false],
      [(s: Sent) => s.onFinal?.(response(481)), true],
      [(s: Sent) => s.onFinal?.(response(500)), true],
      [(s: Sent) => s.onTimeout?.(), true],
    ] as const) {
      const { usage, sent, released } = fakeUsage();
      const progress = new ReferProgress(usage, '<sip:p@h>');
      progress.progress(180);
      answer(sent[1]);
      assert.equal(progress.ended, ends);
      assert.equal(released(), ends ? 1 : 0);
      progress.finish(200);
      assert.equal(released(), 1, 'released exactly once');
    }
  });
});
