// A process of WebRTC callers for bench/webrtc-calls.ts (forked, told what to do over IPC): it
// places its share of the step's calls at its share of the rate, sends each call's 20 ms SRTP
// packets from its keys to its hang-up on one clock for all of them, and reports each call's
// figures. Spread over a few processes so that the callers are not what limits the step; how far
// behind the clock this process fell says whether they were.
// Usage (by the bench): child_process.fork('bench/webrtc-callers-process.ts', { execArgv: ['--import', 'tsx'] })
import { generateDtlsIdentity } from '../src/media/webrtc/dtls-identity.ts';
import { callerAudio, type CallerCodec } from './webrtc-audio.ts';
import { WebRtcCaller, type CallerFigures } from './webrtc-caller.ts';

export type CallersCommand =
  | { readonly type: 'place'; readonly url: string; readonly extension: string; readonly user: string; readonly codec: CallerCodec; readonly count: number; readonly perSecond: number }
  | { readonly type: 'reset' }
  | { readonly type: 'report' }
  | { readonly type: 'hangup' };

export type CallersReply =
  | { readonly type: 'placed'; readonly figures: readonly CallerFigures[] }
  | { readonly type: 'reset' }
  | { readonly type: 'report'; readonly figures: readonly CallerFigures[]; readonly clock: ClockFigures }
  | { readonly type: 'hungup' };

/** The sending clock since the last reset: ticks, and those more than a frame late (the process was behind). */
export interface ClockFigures {
  readonly ticks: number;
  readonly lateTicks: number;
  /** Packets skipped because the process fell more than MAX_CATCH_UP frames behind. */
  readonly skippedFrames: number;
}

const FRAME_MS = 20;
/** After a stall, at most this many frames a call are sent at once; the rest are skipped (and counted). */
const MAX_CATCH_UP = 3;

/** One certificate for the process's calls (a browser makes one per page; the server checks only its fingerprint). */
const IDENTITY = generateDtlsIdentity();

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

class CallersProcess {
  readonly #callers: WebRtcCaller[] = [];
  #clock: { ticks: number; lateTicks: number; skippedFrames: number } = { ticks: 0, lateTicks: 0, skippedFrames: 0 };
  #timer: NodeJS.Timeout | undefined;
  /** Frames due since the clock started, and those sent (for every talking call at once). */
  #clockStart = 0;
  #framesSent = 0;

  async place(command: Extract<CallersCommand, { type: 'place' }>): Promise<CallerFigures[]> {
    const identity = await IDENTITY;
    const audio = callerAudio(command.codec === 'opus' ? 'opus' : 'ulaw');
    this.#startClock();
    const placing: Promise<void>[] = [];
    const gapMs = 1000 / Math.max(command.perSecond, 0.1);
    const start = performance.now();
    for (let i = 0; i < command.count; i++) {
      const caller = new WebRtcCaller(identity, { url: command.url, extension: command.extension, user: command.user, audio });
      this.#callers.push(caller);
      placing.push(caller.call().catch(() => undefined));
      const wait = start + (i + 1) * gapMs - performance.now();
      if (wait > 0) await sleep(wait);
    }
    await Promise.all(placing);
    return this.#callers.map((caller) => caller.figures);
  }

  reset(): void {
    for (const caller of this.#callers) caller.resetCounts();
    this.#clock = { ticks: 0, lateTicks: 0, skippedFrames: 0 };
  }

  report(): { figures: CallerFigures[]; clock: ClockFigures } {
    return { figures: this.#callers.map((caller) => caller.figures), clock: { ...this.#clock } };
  }

  async hangUp(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.all(this.#callers.map((caller) => caller.hangUp().catch(() => caller.close())));
  }

  /**
   * One clock for every call: each wake-up sends the frames due since the last (a call's packets keep
   * 20 ms apart on average however late the timer fires), at most MAX_CATCH_UP of them.
   */
  #startClock(): void {
    this.#clockStart = performance.now();
    this.#timer = setInterval(() => {
      const due = Math.floor((performance.now() - this.#clockStart) / FRAME_MS);
      let frames = due - this.#framesSent;
      this.#clock.ticks += 1;
      if (frames > 1) this.#clock.lateTicks += 1;
      if (frames > MAX_CATCH_UP) {
        this.#clock.skippedFrames += frames - MAX_CATCH_UP;
        frames = MAX_CATCH_UP;
      }
      this.#framesSent = due;
      for (let frame = 0; frame < frames; frame++) for (const caller of this.#callers) if (caller.talking) caller.sendOne();
    }, FRAME_MS);
  }
}

const callers = new CallersProcess();
const reply = (message: CallersReply): void => void process.send!(message);
process.on('message', (message: CallersCommand) => {
  void (async () => {
    if (message.type === 'place') reply({ type: 'placed', figures: await callers.place(message) });
    else if (message.type === 'reset') {
      callers.reset();
      reply({ type: 'reset' });
    } else if (message.type === 'report') reply({ type: 'report', ...callers.report() });
    else if (message.type === 'hangup') {
      await callers.hangUp();
      reply({ type: 'hungup' });
      process.disconnect();
    }
  })();
});
// The bench gone (killed, or done without a goodbye): so are we.
process.on('disconnect', () => setTimeout(() => process.exit(0), 100).unref());
