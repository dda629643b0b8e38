import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TalkDetector, type TalkTransition } from '../../src/media/talk-detector.ts';
import { SilenceDetector } from '../../src/media/silence-detector.ts';
import { sine } from './signals.ts';

const LOUD = sine(400, 8000, 160, 2000);
const QUIET = sine(400, 8000, 160, 100);
const SILENT = new Int16Array(160);

/** Feeds `ms` of a 20 ms frame and returns the transitions with their time. */
function feed(detector: TalkDetector, frame: Int16Array, ms: number, clock: { now: number }): Array<[TalkTransition, number]> {
  const transitions: Array<[TalkTransition, number]> = [];
  for (let elapsed = 0; elapsed < ms; elapsed += 20) {
    clock.now += 20;
    const transition = detector.process(frame, 8000);
    if (transition !== 'none') transitions.push([transition, clock.now]);
  }
  return transitions;
}

describe('TalkDetector', () => {
  it('uses the TALK_DETECT defaults', () => {
    const detector = new TalkDetector();
    assert.equal(detector.energyThreshold, 256);
    assert.equal(detector.talkingThresholdMs, 160);
    assert.equal(detector.silenceThresholdMs, 2500);
  });

  it('reports start after 160 ms of talk and finish after 2500 ms of silence', () => {
    const detector = new TalkDetector();
    const clock = { now: 0 };
    assert.deepEqual(feed(detector, SILENT, 1000, clock), []);
    assert.deepEqual(feed(detector, QUIET, 500, clock), []);
    assert.deepEqual(feed(detector, LOUD, 1200, clock), [['started', 1500 + 160]]);
    assert.equal(detector.talking, true);
    // A pause shorter than the silence threshold belongs to the same spurt.
    assert.deepEqual(feed(detector, SILENT, 2000, clock), []);
    assert.deepEqual(feed(detector, LOUD, 800, clock), []);
    assert.deepEqual(feed(detector, SILENT, 3000, clock), [['finished', 5500 + 2500]]);
    assert.equal(detector.talking, false);
    assert.equal(detector.lastTalkDurationMs, 1200 + 2000 + 800);
  });

  it('ignores bursts shorter than the talking threshold', () => {
    const detector = new TalkDetector({ talkingThresholdMs: 100, silenceThresholdMs: 200 });
    const clock = { now: 0 };
    assert.deepEqual(feed(detector, LOUD, 80, clock), []);
    assert.deepEqual(feed(detector, SILENT, 20, clock), []);
    assert.deepEqual(feed(detector, LOUD, 80, clock), []);
    // The talk spurt began at 100 ms; it is reported once 100 ms long.
    assert.deepEqual(feed(detector, LOUD, 40, clock), [['started', 200]]);
    assert.deepEqual(feed(detector, SILENT, 200, clock), [['finished', 420]]);
    assert.equal(detector.lastTalkDurationMs, 120);
    detector.reset();
    assert.equal(detector.lastTalkDurationMs, 0);
  });

  it('works at 16 kHz with the frame duration taken from the rate', () => {
    const detector = new TalkDetector({ talkingThresholdMs: 60 });
    const wide = sine(400, 16000, 320, 2000);
    assert.equal(detector.process(wide, 16000), 'none');
    assert.equal(detector.process(wide, 16000), 'none');
    assert.equal(detector.process(wide, 16000), 'started');
  });
});

describe('SilenceDetector', () => {
  it('accumulates talking and silence and trips on continuous silence', () => {
    const detector = new SilenceDetector({ maxSilenceMs: 1000 });
    for (let i = 0; i < 25; i++) detector.process(LOUD, 8000);
    for (let i = 0; i < 30; i++) assert.equal(detector.process(SILENT, 8000), false);
    for (let i = 0; i < 25; i++) detector.process(LOUD, 8000);
    for (let i = 0; i < 49; i++) assert.equal(detector.process(QUIET, 8000), false);
    assert.equal(detector.continuousSilenceMs, 980);
    assert.equal(detector.process(SILENT, 8000), true);
    assert.equal(detector.limitReached, true);
    assert.equal(detector.talkingMs, 1000);
    assert.equal(detector.silenceMs, 600 + 1000);
  });

  it('never trips without a limit, and counts initial silence', () => {
    const unlimited = new SilenceDetector({ maxSilenceMs: 0 });
    for (let i = 0; i < 500; i++) assert.equal(unlimited.process(SILENT, 8000), false);
    const limited = new SilenceDetector({ maxSilenceMs: 100 });
    const results = Array.from({ length: 5 }, () => limited.process(SILENT, 8000));
    assert.deepEqual(results, [false, false, false, false, true]);
    limited.reset();
    assert.equal(limited.silenceMs, 0);
  });
});
