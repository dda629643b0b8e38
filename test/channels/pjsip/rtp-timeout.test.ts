// The rtp_timeout check on its own (no server, the clock given by the test): silence counts only
// while the call is not held, any new packet restarts the count, 0 never starts, stop() ends it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RtpTimeout } from '../../../src/channels/pjsip/rtp-timeout.ts';

function watch(seconds: number) {
  const state = { received: 0 as number | undefined, held: false, expired: [] as number[] };
  const timeout = new RtpTimeout(seconds, { received: () => state.received, held: () => state.held }, (s) => state.expired.push(s));
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
  timeout.check(11_000);
  assert.deepEqual(state.expired, []);
  timeout.check(12_000);
  assert.deepEqual(state.expired, [2]);
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
