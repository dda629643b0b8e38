// The jitter buffer through event-loop stalls, on a simulated loop with a 1 ms step that does what
// Node does: due timers first (the media clocks, each running at most 10 overdue ticks back to back
// and dropping the rest, as MediaClock does), then the sockets. A sender and a reader each have a
// clock; either, or both (two servers in one busy process), stop for a while. After a stall, audio
// must come back within 200 ms and from then on at most the frames dropped to shed the delay the
// stall added (the target grew to the maximum, 200 ms: ten frames) may go unplayed.
//
// The defect this pins down (test/testing/sip-caller.test.ts under load): a sender that stalled
// sends on with timestamps continuing from before (its clock dropped the stall's ticks), so its
// packets' transit steps up by the stall; beyond the maximum delay every one of them was dropped as
// late until the transit window forgot the old baseline, 2 to 4 s later.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { JitterBuffer } from '../../../src/media/rtp/jitter-buffer.ts';

const FRAME_MS = 20;
const CATCH_UP_TICKS = 10;
const RESUME_MS = 200;

interface Scenario {
  /** [from, to) in ms: the sender's loop does not run. */
  readonly senderStalls?: ReadonlyArray<readonly [number, number]>;
  /** [from, to) in ms: the reader's loop does not run. */
  readonly readerStalls?: ReadonlyArray<readonly [number, number]>;
  /** The sender's timestamps follow the wall clock across its dropped ticks (as Asterisk's do). */
  readonly wallClockTimestamps?: boolean;
  readonly firstTimestamp?: number;
  readonly untilMs?: number;
}

interface Heard {
  /** Per tick run (when it ran; dropped ticks are not): the packet index played, or undefined. */
  readonly played: Array<{ readonly at: number; readonly packet: number | undefined }>;
  /** When each packet was sent. */
  readonly sentAt: number[];
  readonly buffer: JitterBuffer;
}

/** A media clock's timer as MediaClock runs it: due ticks back to back, at most CATCH_UP_TICKS, the rest dropped. */
class SimulatedClock {
  #nextDue = FRAME_MS;
  run(now: number, onDropped: (count: number) => void, onTick: () => void): void {
    if (now < this.#nextDue) return;
    const excess = Math.floor((now - this.#nextDue) / FRAME_MS) + 1 - CATCH_UP_TICKS;
    if (excess > 0) {
      this.#nextDue += excess * FRAME_MS;
      onDropped(excess);
    }
    while (now >= this.#nextDue) {
      onTick();
      this.#nextDue += FRAME_MS;
    }
  }
}

const stalled = (stalls: Scenario['senderStalls'], now: number): boolean => stalls?.some(([from, to]) => now >= from && now < to) ?? false;

function simulate(scenario: Scenario): Heard {
  const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
  const samples = new Int16Array(160);
  const sender = new SimulatedClock();
  const reader = new SimulatedClock();
  const network: Array<{ readonly index: number; readonly timestamp: number; readonly at: number }> = [];
  const played: Heard['played'] = [];
  const sentAt: number[] = [];
  let timestamp = scenario.firstTimestamp ?? 1000;
  const untilMs = scenario.untilMs ?? 6000;
  for (let now = 0; now < untilMs; now++) {
    if (!stalled(scenario.senderStalls, now)) {
      sender.run(
        now,
        (dropped) => {
          if (scenario.wallClockTimestamps) timestamp += dropped * 160;
        },
        () => {
          network.push({ index: sentAt.length, timestamp: timestamp >>> 0, at: now });
          sentAt.push(now);
          timestamp += 160;
        },
      );
    }
    if (stalled(scenario.readerStalls, now)) continue;
    // Timers before sockets, as Node's loop runs them.
    reader.run(
      now,
      (dropped) => buffer.ticksSkipped(dropped),
      () => {
        const frame = buffer.next(now);
        const value = frame?.samples[0] ?? 0;
        // Concealment halves the level: only whole packets (value = index + 1) count as heard.
        played.push({ at: now, packet: frame && value > 0 && value <= sentAt.length && frame.samples.every((s) => s === value) ? value - 1 : undefined });
      },
    );
    while (network.length > 0 && network[0]!.at <= now) {
      const packet = network.shift()!;
      samples.fill(packet.index + 1);
      buffer.push(samples, 160, packet.timestamp, 7, now);
    }
  }
  return { played, sentAt, buffer };
}

/** How long after `fromMs` a packet is heard again, in ms (the clock's catch-up ticks run at once). */
function resumedAfter(heard: Heard, fromMs: number): number {
  const first = heard.played.find((p) => p.at >= fromMs && p.packet !== undefined);
  return first ? first.at - fromMs : Number.POSITIVE_INFINITY;
}

/** At most the frames dropped to shed the delay a stall adds (200 ms), and one. */
const SHED_FRAMES = 11;

/** Packets sent from `fromMs` on (until a second before the end) that were never played. */
function lostAfter(heard: Heard, fromMs: number): number[] {
  const playedSet = new Set(heard.played.map((p) => p.packet));
  const last = heard.played.at(-1)!.at - 1000;
  return heard.sentAt.flatMap((at, index) => (at >= fromMs && at < last && !playedSet.has(index) ? [index] : []));
}

function assertFewLost(heard: Heard, fromMs: number): void {
  const lost = lostAfter(heard, fromMs);
  assert.ok(lost.length <= SHED_FRAMES, `${lost.length} packets sent after ${fromMs} ms not played: ${lost.join(' ')}`);
}

const STALLS_MS = [500, 1000, 2000];
const STALL_AT = 1000;

describe('jitter buffer after an event-loop stall', () => {
  for (const stallMs of STALLS_MS) {
    const end = STALL_AT + stallMs;

    test(`the reader stalls ${stallMs} ms while packets keep coming: audio back within ${RESUME_MS} ms, nothing lost after`, () => {
      const heard = simulate({ readerStalls: [[STALL_AT, end]] });
      const resumed = resumedAfter(heard, end);
      assert.ok(resumed <= RESUME_MS, `heard again ${resumed} ms after the stall`);
      assertFewLost(heard, end);
    });

    test(`the sender stalls ${stallMs} ms, then a burst and timestamps going on from before: audio back within ${RESUME_MS} ms`, () => {
      const heard = simulate({ senderStalls: [[STALL_AT, end]] });
      const resumed = resumedAfter(heard, end);
      assert.ok(resumed <= RESUME_MS, `heard again ${resumed} ms after the stall (late ${heard.buffer.late})`);
      assertFewLost(heard, end + RESUME_MS);
      assert.ok(heard.buffer.late <= CATCH_UP_TICKS + 3, `${heard.buffer.late} packets dropped as late`);
    });

    test(`both stall ${stallMs} ms (two servers in one process): audio back within ${RESUME_MS} ms`, () => {
      const heard = simulate({ senderStalls: [[STALL_AT, end]], readerStalls: [[STALL_AT, end]] });
      const resumed = resumedAfter(heard, end);
      assert.ok(resumed <= RESUME_MS, `heard again ${resumed} ms after the stall (late ${heard.buffer.late})`);
      assertFewLost(heard, end + RESUME_MS);
    });

    test(`the sender stalls ${stallMs} ms and its timestamps jump by the stall: audio back within ${RESUME_MS} ms`, () => {
      const heard = simulate({ senderStalls: [[STALL_AT, end]], wallClockTimestamps: true });
      assert.ok(resumedAfter(heard, end) <= RESUME_MS, `heard again ${resumedAfter(heard, end)} ms after the stall`);
      assertFewLost(heard, end + RESUME_MS);
    });
  }

  test('the sender stalls 300 ms, 400 ms, 600 ms, 900 ms in turn (a loaded machine): audio comes back after each', () => {
    const stalls = [
      [1000, 1300],
      [2000, 2400],
      [3000, 3600],
      [4500, 5400],
    ] as const;
    const heard = simulate({ senderStalls: stalls, untilMs: 8000 });
    for (const [, end] of stalls) assert.ok(resumedAfter(heard, end) <= RESUME_MS, `heard again ${resumedAfter(heard, end)} ms after the stall ending at ${end} ms`);
    assertFewLost(heard, 5400 + RESUME_MS);
  });

  test('the 32-bit timestamp wraps during the stall: audio back within 200 ms', () => {
    // 1.5 s of packets before the stall, then the wrap within it.
    const heard = simulate({ senderStalls: [[STALL_AT, STALL_AT + 700]], readerStalls: [[STALL_AT + 100, STALL_AT + 800]], firstTimestamp: 0x1_0000_0000 - 8000 * 1.2 });
    assert.ok(resumedAfter(heard, STALL_AT + 800) <= RESUME_MS, `heard again ${resumedAfter(heard, STALL_AT + 800)} ms after the stall`);
    assertFewLost(heard, STALL_AT + 800 + RESUME_MS);
  });

  for (const stallMs of [100, 150]) {
    test(`the reader (or both) stalls ${stallMs} ms, within the clock's catch-up: not taken for network jitter, no hold, the delay stays least`, () => {
      for (const scenario of [{ readerStalls: [[STALL_AT, STALL_AT + stallMs]] as const }, { readerStalls: [[STALL_AT, STALL_AT + stallMs]] as const, senderStalls: [[STALL_AT, STALL_AT + stallMs]] as const }]) {
        const heard = simulate(scenario);
        const resumed = resumedAfter(heard, STALL_AT + stallMs);
        assert.ok(resumed <= 2 * FRAME_MS, `heard again ${resumed} ms after the stall`);
        assert.equal(heard.buffer.stretches, 0, 'playout was never held');
        assert.ok(heard.buffer.targetDelayMs <= 40, `target delay ${heard.buffer.targetDelayMs} ms`);
      }
    });
  }

  test('no stall: every packet played once, in order, nothing late, no resync', () => {
    const heard = simulate({});
    const order = heard.played.flatMap((p) => (p.packet === undefined ? [] : [p.packet]));
    assert.deepEqual(order, Array.from({ length: order.length }, (_, i) => i));
    assert.ok(order.length >= heard.sentAt.length - 3);
    assert.equal(heard.buffer.late, 0);
    assert.equal(heard.buffer.resyncs, 0);
  });
});
