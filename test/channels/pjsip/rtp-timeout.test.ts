// The rtp_timeout check on its own (no server, the clock given by the test): silence counts only
// while the call is not held (rtp_timeout_hold's limit while it is), any new packet and any change
// between held and not held restarts the count, 0 never starts, stop() ends it; while the media is
// direct nothing counts, and its return starts the count again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RtpTimeout } from '../../../src/channels/pjsip/rtp-timeout.ts';

function watch(seconds: number, holdSeconds = 0) {
  const state = { received: 0 as number | undefined, held: false, direct: false, expired: [] as number[], when: [] as string[] };
  const timeout = new RtpTimeout(seconds, { received: () => state.received, held: () => state.held, direct: () => state.direct }, (s, when) => {
    state.expired.push(s);
    state.when.push(when);
  }, holdSeconds);
  return { state, timeout };
}

test('silence for the whole timeout expires once, with the seconds; packets and hold restart the count', () => {
  const { state, timeout } = watch(2);
  timeout.start(0);
  timeout.check(1_000);
  state.received = 5;
  timeout.check(1_500); // packets arrived: quiet since 1.5 s
  timeout.check(3_000);
  assert.deepEqual(state.expired, []);
  state.held = true;
  timeout.check(10_000); // held: silence is expected
  state.held = false;
  timeout.check(11_000); // resumed: quiet since 11 s
  timeout.check(12_000);
  assert.deepEqual(state.expired, []);
  timeout.check(13_000);
  assert.deepEqual(state.expired, [2]);
  assert.deepEqual(state.when, ['active']);
  timeout.check(20_000);
  assert.deepEqual(state.expired, [2], 'expires once');
  timeout.stop();
});

test('0 never starts; stop() before the end means no expiry', () => {
  const off = watch(0);
  off.timeout.start(0);
  off.timeout.check(100_000);
  assert.deepEqual(off.state.expired, []);
  const stopped = watch(1);
  stopped.timeout.start(0);
  stopped.timeout.stop();
  stopped.timeout.check(100_000);
  assert.deepEqual(stopped.state.expired, []);
});

test('rtp_timeout_hold: silence while held expires after its own limit; not held, only rtp_timeout counts', () => {
  const { state, timeout } = watch(30, 2);
  timeout.start(0);
  timeout.check(20_000); // 20 s quiet, not held: under rtp_timeout
  state.held = true;
  timeout.check(21_000); // held now: quiet since 21 s, whatever came before
  timeout.check(22_000);
  assert.deepEqual(state.expired, []);
  timeout.check(23_000);
  assert.deepEqual(state.expired, [2]);
  assert.deepEqual(state.when, ['held']);
});

test('rtp_timeout_hold alone: a call not held is never hung up for silence; a packet while held restarts the count', () => {
  const { state, timeout } = watch(0, 3);
  timeout.start(0);
  timeout.check(100_000);
  assert.deepEqual(state.expired, []);
  state.held = true;
  timeout.check(101_000);
  state.received = 1; // a held phone may still send (comfort noise, a keepalive)
  timeout.check(103_000);
  timeout.check(105_000);
  assert.deepEqual(state.expired, []);
  timeout.check(106_000);
  assert.deepEqual(state.expired, [3]);
  assert.deepEqual(state.when, ['held']);
});

test('direct media: no RTP while direct never expires; the count starts again when the media returns', () => {
  const { state, timeout } = watch(2, 2);
  timeout.start(0);
  timeout.check(1_000);
  state.direct = true; // re-INVITEd to the other phone: nothing comes here by design
  timeout.check(1_500);
  timeout.check(10_000);
  timeout.check(60_000);
  state.held = true; // held while direct: rtp_timeout_hold does not count either
  timeout.check(70_000);
  state.held = false;
  timeout.check(80_000);
  assert.deepEqual(state.expired, []);
  state.direct = false; // back to us: quiet since 81 s, not since 1 s
  timeout.check(81_000);
  timeout.check(82_000);
  assert.deepEqual(state.expired, []);
  timeout.check(83_000);
  assert.deepEqual(state.expired, [2]);
  assert.deepEqual(state.when, ['active']);
});
