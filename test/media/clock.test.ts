import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { MediaClock } from '../../src/media/clock.ts';

describe('MediaClock in manual mode', () => {
  it('calls listeners in the order added, with the tick index', () => {
    const clock = new MediaClock({ manual: true });
    const calls: string[] = [];
    const first = (tick: number) => calls.push(`a${tick}`);
    clock.add(first);
    clock.add((tick) => calls.push(`b${tick}`));
    clock.add(first);
    assert.equal(clock.listenerCount, 2);
    clock.start();
    clock.tick();
    clock.tick();
    assert.deepEqual(calls, ['a0', 'b0', 'a1', 'b1']);
    assert.equal(clock.ticks, 2);
  });

  it('applies removal at once and additions from the next tick', () => {
    const clock = new MediaClock({ manual: true });
    const calls: string[] = [];
    const late = () => calls.push('late');
    const removed = () => calls.push('removed');
    clock.add(() => {
      calls.push('remover');
      clock.remove(removed);
      clock.add(late);
    });
    clock.add(removed);
    clock.tick();
    clock.tick();
    assert.deepEqual(calls, ['remover', 'remover', 'late']);
  });

  it('keeps ticking the others when one listener throws', () => {
    const errors: unknown[] = [];
    const clock = new MediaClock({ manual: true, onListenerError: (error) => errors.push(error) });
    let ran = 0;
    clock.add(() => {
      throw new Error('boom');
    });
    clock.add(() => ran++);
    clock.tick();
    assert.equal(ran, 1);
    assert.equal((errors[0] as Error).message, 'boom');
  });

  it('never schedules a timer', async () => {
    const clock = new MediaClock({ manual: true });
    let ticks = 0;
    clock.add(() => ticks++);
    clock.start();
    await sleep(60);
    clock.stop();
    assert.equal(ticks, 0);
  });
});

describe('MediaClock with its timer', () => {
  it('ticks every 20 ms without drifting over a second', async () => {
    const clock = new MediaClock();
    const times: bigint[] = [];
    clock.add(() => times.push(process.hrtime.bigint()));
    const started = process.hrtime.bigint();
    clock.start();
    await sleep(1010);
    clock.stop();
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(Math.abs(times.length - 50) <= 2, `${times.length} ticks in ${elapsedMs} ms`);
    // Tick n is due at (n + 1) × 20 ms; lateness must not accumulate.
    const lastLateMs = Number(times[times.length - 1] - started) / 1e6 - times.length * 20;
    assert.ok(lastLateMs > -1.5 && lastLateMs < 15, `last tick ${lastLateMs} ms off schedule`);
    assert.equal(clock.skippedTicks, 0);
    const countAfterStop = times.length;
    await sleep(60);
    assert.equal(times.length, countAfterStop);
  });

  it('catches up after a stall, bounded by maxCatchUpTicks', async () => {
    const clock = new MediaClock({ maxCatchUpTicks: 3 });
    let ticks = 0;
    let stalled = false;
    clock.add(() => {
      ticks++;
      if (!stalled) {
        stalled = true;
        const until = Date.now() + 150;
        while (Date.now() < until) {
          // Busy-wait: a blocked event loop, as during a long GC pause.
        }
      }
    });
    clock.start();
    await sleep(400);
    clock.stop();
    assert.ok(clock.skippedTicks >= 3, `skipped ${clock.skippedTicks}`);
    assert.ok(Math.abs(ticks + clock.skippedTicks - 20) <= 2, `${ticks} ticks + ${clock.skippedTicks} skipped`);
  });

  it('can be stopped from inside a listener', async () => {
    const clock = new MediaClock();
    let ticks = 0;
    clock.add(() => {
      ticks++;
      clock.stop();
    });
    clock.start();
    await sleep(100);
    assert.equal(ticks, 1);
    assert.equal(clock.running, false);
  });
});
