import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it, type TestContext } from 'node:test';
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

/**
 * The clock's time and timer, simulated: process.hrtime.bigint reads `nowMs`, and the one timer
 * the clock keeps fires when the test says, as late as the test wants. So what is asserted (the
 * schedule, catch-up, the bound on it) is counted, not timed: a loaded machine cannot change it.
 * A catch-up the clock leaves to setImmediate runs right after the timer, as the loop's check phase
 * would once the sockets were polled (no time passes in between).
 */
class SimulatedTime {
  nowMs = 1_000;
  #pending: { run: () => void; dueMs: number } | undefined;
  #immediate: (() => void) | undefined;
  /** How many wake-ups left their ticks to setImmediate. */
  deferred = 0;

  constructor(t: TestContext) {
    t.mock.method(process.hrtime, 'bigint', () => BigInt(Math.round(this.nowMs * 1e6)));
    const setTimer = (run: () => void, delayMs: number) => {
      this.#pending = { run, dueMs: this.nowMs + delayMs };
      return { unref: () => undefined };
    };
    t.mock.method(globalThis, 'setTimeout', setTimer);
    t.mock.method(globalThis, 'clearTimeout', () => (this.#pending = undefined));
    t.mock.method(globalThis, 'setImmediate', (run: () => void) => {
      this.#immediate = run;
      this.deferred++;
      return {};
    });
    t.mock.method(globalThis, 'clearImmediate', () => (this.#immediate = undefined));
  }

  get timerPending(): boolean {
    return this.#pending !== undefined;
  }

  /** Fires the clock's timer `lateMs` after it was due (the time moves there first). */
  fire(lateMs = 0): void {
    const pending = this.#pending;
    assert.ok(pending, 'the clock keeps a timer while it runs');
    this.#pending = undefined;
    this.nowMs = Math.max(this.nowMs, pending.dueMs + lateMs);
    pending.run();
    const immediate = this.#immediate;
    this.#immediate = undefined;
    immediate?.();
  }

  /** Fires the timer `lateMs` late but stops before the check phase: what ran in the timers phase. */
  fireTimerOnly(lateMs: number): void {
    const pending = this.#pending;
    assert.ok(pending, 'the clock keeps a timer while it runs');
    this.#pending = undefined;
    this.nowMs = Math.max(this.nowMs, pending.dueMs + lateMs);
    pending.run();
  }

  /** Runs what the clock left to setImmediate (the check phase). */
  runImmediate(): void {
    const immediate = this.#immediate;
    assert.ok(immediate, 'a catch-up waits for setImmediate');
    this.#immediate = undefined;
    immediate();
  }
}

describe('MediaClock with its timer (simulated time)', () => {
  it('ticks every 20 ms against absolute deadlines: late wake-ups do not drift', (t) => {
    const time = new SimulatedTime(t);
    const clock = new MediaClock();
    const at: number[] = [];
    clock.add(() => at.push(time.nowMs));
    const started = time.nowMs;
    clock.start();
    // Every wake-up late by 0–9 ms (a loaded event loop), for a second of ticks.
    for (let i = 0; time.nowMs - started < 1000; i++) time.fire((i * 7) % 10);
    const elapsed = time.nowMs - started;
    // One tick per 20 ms that passed (a tick due within 1 ms runs early), however late each wake-up.
    assert.ok(Math.abs(at.length - Math.floor(elapsed / 20)) <= 1, `${at.length} ticks in ${elapsed} ms`);
    // Tick n is due at (n + 1) × 20 ms: it never runs before (less the 1 ms margin), and its
    // lateness stays that of one wake-up instead of adding up.
    at.forEach((when, n) => {
      const late = when - started - (n + 1) * 20;
      assert.ok(late >= -1 && late < 10, `tick ${n} ${late} ms off schedule`);
    });
    assert.equal(clock.skippedTicks, 0);
    assert.equal(time.deferred, 0, 'a wake-up with one tick due runs it in the timer');
    clock.stop();
    assert.equal(time.timerPending, false, 'stop() clears the timer');
  });

  it('leaves the catch-up ticks of a late wake-up until the sockets were read (setImmediate), then runs them', (t) => {
    const time = new SimulatedTime(t);
    const clock = new MediaClock();
    let ticks = 0;
    clock.add(() => ticks++);
    clock.start();
    time.fire();
    assert.equal(ticks, 1);
    // Three ticks due (a 45 ms late wake-up): none runs in the timers phase, all three after the poll.
    time.fireTimerOnly(45);
    assert.equal(ticks, 1, 'no tick in the timers phase');
    assert.equal(time.timerPending, false, 'no second timer while the catch-up waits');
    time.runImmediate();
    assert.equal(ticks, 4);
    assert.equal(time.timerPending, true, 'the schedule goes on');
    clock.stop();
  });

  it('stop() while a catch-up waits: it never runs', (t) => {
    const time = new SimulatedTime(t);
    const clock = new MediaClock();
    let ticks = 0;
    clock.add(() => ticks++);
    clock.start();
    time.fireTimerOnly(100);
    clock.stop();
    assert.throws(() => time.runImmediate(), /a catch-up waits/, 'stop() cleared it');
    assert.equal(ticks, 0);
  });

  it('catches up after a stall, bounded by maxCatchUpTicks', (t) => {
    const time = new SimulatedTime(t);
    const clock = new MediaClock({ maxCatchUpTicks: 3 });
    let ticks = 0;
    clock.add(() => ticks++);
    const started = time.nowMs;
    clock.start();
    time.fire();
    assert.equal(ticks, 1);
    // A 150 ms stall (a long GC pause): 7 ticks are due at the next wake-up, 3 run, 4 are dropped.
    time.nowMs += 150;
    time.fire();
    assert.equal(ticks, 4);
    assert.equal(clock.skippedTicks, 4);
    // Then on schedule again: every 20 ms counted, ran or dropped.
    while (time.nowMs - started < 400) time.fire();
    assert.equal(ticks + clock.skippedTicks, Math.floor((time.nowMs - started) / 20));
    clock.stop();
  });

  it('can be stopped from inside a listener', (t) => {
    const time = new SimulatedTime(t);
    const clock = new MediaClock();
    let ticks = 0;
    clock.add(() => {
      ticks++;
      clock.stop();
    });
    clock.start();
    time.fire(45);
    assert.equal(ticks, 1, 'the overdue ticks after the stopping one do not run');
    assert.equal(clock.running, false);
    assert.equal(time.timerPending, false);
  });
});

describe('MediaClock with the real timer', () => {
  // How close to schedule it runs on this machine is a measurement: bench/media-clock.ts.
  it('ticks by itself and not after stop()', async () => {
    const clock = new MediaClock();
    let ticks = 0;
    clock.add(() => ticks++);
    clock.start();
    const deadline = Date.now() + 30_000;
    while (ticks < 10 && Date.now() < deadline) await sleep(20);
    clock.stop();
    assert.ok(ticks >= 10, `${ticks} ticks`);
    const countAfterStop = ticks;
    await sleep(60);
    assert.equal(ticks, countAfterStop);
  });
});
