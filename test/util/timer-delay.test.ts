// Issue 21 item 12: delays beyond 2^31 - 1 ms used to fire after 1 ms (TimeoutOverflowWarning):
// an originate with timeout=3000000 hung up at once, Wait(3000000) returned at once. They are
// clamped to 24.8 days instead.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAX_TIMER_DELAY_MS, timerDelay } from '../../src/util/timer-delay.ts';
import { startTestServer } from '../helpers/server.ts';

test('timerDelay keeps what setTimeout can hold', () => {
  assert.equal(timerDelay(1500), 1500);
  assert.equal(timerDelay(3_000_000_000), MAX_TIMER_DELAY_MS);
  assert.equal(timerDelay(Infinity), MAX_TIMER_DELAY_MS);
  assert.equal(timerDelay(-5), 0);
  assert.equal(timerDelay(Number.NaN), 0);
});

test('an originate timeout and a Wait() beyond 24.8 days wait instead of ending at once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-timer-'));
  writeFileSync(join(dir, 'extensions.conf'), '[t]\nexten => ring,1,Wait(600)\nexten => long,1,Answer()\n same => n,Wait(3000000)\n same => n,Set(WAITED=done)\n same => n,Wait(600)\n');
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning.name);
  process.on('warning', onWarning);
  const server = await startTestServer({ dialplan: { file: join(dir, 'extensions.conf') } });
  const events = await server.events('app=timer-test');
  try {
    const ringing = await server.ari('/channels?endpoint=Local/ring@t&app=timer-test&timeout=3000000&channelId=long-ring', { method: 'POST' });
    assert.equal(ringing.status, 200);
    const waiting = await server.ari('/channels?endpoint=Local/long@t&app=timer-test&channelId=long-wait', { method: 'POST' });
    assert.equal(waiting.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.ok(server.core.channels.get('long-ring'), 'the originate is still ringing');
    const two = server.core.channels.list().find((channel) => channel.name.startsWith('Local/long@t') && channel.name.endsWith(';2'));
    assert.ok(two, 'the waiting half is up');
    assert.equal(two.getVariable('WAITED'), undefined, 'Wait(3000000) is still waiting');
    assert.equal(warnings.includes('TimeoutOverflowWarning'), false);
  } finally {
    process.off('warning', onWarning);
    events.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
