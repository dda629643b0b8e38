// Echo()'s fast path: on a channel nothing else listens to, whose technology can loop its audio
// (a SIP call in a media worker), Echo() asks the technology to loop and listens to no frame; once
// something taps the channel (a snoop's hook, a listener) it stops the loop and echoes frame by
// frame; at the end the loop is off. Without the capability it echoes frame by frame from the start.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Frame } from '../../src/media/frame.ts';
import { TypedEmitter } from '../../src/util/typed-emitter.ts';
import type { ChannelInternalEvents, FrameListener } from '../../src/core/channels/channel.ts';
import { echo } from '../../src/pbx/apps/echo.ts';

/** The part of a channel Echo() uses. */
class FakeChannel extends TypedEmitter<ChannelInternalEvents> {
  hangingUp = false;
  generatorActive = false;
  interruptOnWrite: (() => void) | undefined;
  hooks = 0;
  listeners: FrameListener[] = [];
  written: Frame[] = [];
  loopCalls: boolean[] = [];
  constructor(private readonly canLoop: boolean) {
    super();
  }
  readonly driver = {
    loopAudio: (on: boolean): boolean => {
      this.loopCalls.push(on);
      return this.canLoop;
    },
    sendDigit: (): void => undefined,
  };
  get mediaTapped(): boolean {
    return this.listeners.length > 0 || this.hooks > 0;
  }
  addFrameListener(listener: FrameListener): void {
    this.listeners.push(listener);
    this.emit('media-tapped', undefined);
  }
  removeFrameListener(listener: FrameListener): void {
    this.listeners = this.listeners.filter((entry) => entry !== listener);
  }
  addHook(): void {
    this.hooks += 1;
    this.emit('media-tapped', undefined);
  }
  digit(digit: string): void {
    this.emit('dtmf', { digit, durationMs: 100 });
  }
  hangUp(): void {
    this.emit('hangup', { cause: 16 });
  }
  write(frame: Frame): void {
    this.written.push(frame);
  }
  deliver(frame: Frame): void {
    for (const listener of this.listeners) listener(frame, this as never);
  }
}

const frame: Frame = { rate: 8000, samples: new Int16Array(160) };

describe('Echo() fast path', () => {
  test('loops in the technology while untapped; a tap turns the loop off and frames are echoed; the end turns it off', async () => {
    const channel = new FakeChannel(true);
    const done = echo.execute(channel as never, [], {} as never, '');
    assert.deepEqual(channel.loopCalls, [true]);
    assert.equal(channel.listeners.length, 0, 'no frame listener while the technology loops');
    channel.addHook();
    assert.deepEqual(channel.loopCalls, [true, false]);
    assert.equal(channel.listeners.length, 1);
    channel.deliver(frame);
    assert.equal(channel.written.length, 1, 'frames echoed by Echo() once tapped');
    channel.digit('#');
    assert.equal(await done, 'next');
    assert.equal(channel.listeners.length, 0);
    assert.deepEqual(channel.loopCalls, [true, false], 'no second off: the loop was already off');
  });

  test('a hang-up while looping turns the loop off', async () => {
    const channel = new FakeChannel(true);
    const done = echo.execute(channel as never, [], {} as never, '');
    channel.hangUp();
    assert.equal(await done, 'stop');
    assert.deepEqual(channel.loopCalls, [true, false]);
  });

  test('a technology that cannot loop, or a channel already tapped: frame by frame from the start', async () => {
    for (const [canLoop, tapped] of [[false, false], [true, true]] as const) {
      const channel = new FakeChannel(canLoop);
      if (tapped) channel.addHook();
      const done = echo.execute(channel as never, [], {} as never, '');
      assert.deepEqual(channel.loopCalls, tapped ? [] : [true]);
      assert.equal(channel.listeners.length, 1);
      channel.deliver(frame);
      assert.equal(channel.written.length, 1);
      channel.hangUp();
      assert.equal(await done, 'stop');
    }
  });

  test('under a generator the echo is dropped (PlayTones(), a playback), as ast_write; an interruptible one (an indication tone) lets it through', async () => {
    const channel = new FakeChannel(false);
    const run = echo.execute(channel as never, [], {} as never, '');
    channel.generatorActive = true;
    channel.deliver(frame);
    assert.equal(channel.written.length, 0, 'dropped under a tone PlayTones() plays');
    channel.interruptOnWrite = () => undefined;
    channel.deliver(frame);
    assert.equal(channel.written.length, 1, 'through an indication tone (which the write ends)');
    channel.hangUp();
    assert.equal(await run, 'stop');
  });
});
