// The simplest way to put two channels in a call: every audio frame and DTMF digit one channel
// receives from its far end is sent on to the other's far end. Dial() uses it for the answered
// pair; the bridging engine can take its place behind the same signature. While nothing else
// listens to either channel the technologies are asked to pass the audio themselves (audio-relay.ts).
import type { Frame } from '../../media/frame.ts';
import { AudioRelay } from './audio-relay.ts';
import type { Channel, FrameListener } from './channel.ts';

/** Two channels' media connected: disconnect() ends it; relayed() says whether their technologies carry the audio now. */
export interface MediaConnection {
  disconnect(): void;
  relayed(): boolean;
}

/** Connects the media of `a` and `b` in both directions; the returned function disconnects them. */
export function connectChannels(a: Channel, b: Channel): () => void {
  return connectMedia(a, b).disconnect;
}

/** connectChannels, also telling whether the technologies relay the audio themselves (audio-relay.ts). */
/**
 * A digit's last stop before it crosses: true when it was taken (a feature code, held back);
 * the call's in-call features (two-party-call.ts) read the digits so.
 */
export type DigitInterceptor = (from: Channel, digit: string, durationMs: number) => boolean;

export function connectMedia(a: Channel, b: Channel, intercept?: DigitInterceptor): MediaConnection {
  const forward = (from: Channel, to: Channel): { frame: FrameListener; dtmf: (digit: { digit: string; durationMs: number }) => void } => ({
    // A channel hearing media of its own (music on hold while held) hears that instead, as in a
    // bridge; an interruptible one (an indication tone: ringing before early media) gives way.
    frame: (frame: Frame) => {
      if (!to.generatorActive || to.interruptOnWrite !== undefined) to.write(frame);
    },
    dtmf: ({ digit, durationMs }) => {
      if (intercept?.(from, digit, durationMs) === true) return;
      if (!to.hangingUp) to.driver.sendDigit(digit, durationMs);
    },
  });
  const aToB = forward(a, b);
  const bToA = forward(b, a);
  a.addFrameListener(aToB.frame);
  b.addFrameListener(bToA.frame);
  a.on('dtmf', aToB.dtmf);
  b.on('dtmf', bToA.dtmf);
  // Digits read for features must keep reaching the server: no direct media then.
  const relay = new AudioRelay(a, b, aToB.frame, bToA.frame, undefined, intercept === undefined);
  let connected = true;
  const disconnect = (): void => {
    if (!connected) return;
    connected = false;
    relay.stop();
    a.removeFrameListener(aToB.frame);
    b.removeFrameListener(bToA.frame);
    a.off('dtmf', aToB.dtmf);
    b.off('dtmf', bToA.dtmf);
  };
  return { disconnect, relayed: () => connected && relay.engaged };
}
