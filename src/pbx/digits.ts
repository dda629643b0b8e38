// DTMF for the menu applications (Background, WaitExten, Read): a bounded queue of the digits a
// channel receives while an application listens, prompts that a digit interrupts, and the
// collection of a dialed extension with TIMEOUT(digit) between digits, as pbx.c does after
// Background or WaitExten.
import type { Channel } from '../core/channels/channel.ts';
import type { Playback } from '../core/playback/playback.ts';
import type { AppOutcome } from './application.ts';
import type { PbxServices } from './application-services.ts';
import { digitTimeoutMs } from './timeouts.ts';
import { timerDelay } from '../util/timer-delay.ts';

/** Digits kept while nobody reads them; more are dropped (a flood of DTMF cannot grow memory). */
const MAX_QUEUED_DIGITS = 64;
/** The longest extension collected from digits. */
export const MAX_COLLECTED_DIGITS = 80;

export class DigitReader {
  private readonly queue: string[] = [];
  private waiter: ((digit: string | undefined) => void) | undefined;
  private ended = false;
  /** The prompt playing now; a digit `interrupts` accepts stops it. */
  private playing: { playback: Playback; interrupts: (digit: string) => boolean } | undefined;

  constructor(
    private readonly channel: Channel,
    private readonly services: PbxServices,
  ) {
    channel.on('dtmf', this.onDigit);
    channel.once('hangup', this.onEnd);
    channel.on('pbx-interrupt', this.onEnd);
    if (channel.hangingUp) this.ended = true;
  }

  get done(): boolean {
    return this.ended;
  }

  private readonly onDigit = ({ digit }: { digit: string }): void => {
    const playing = this.playing;
    if (playing) {
      // A digit that does not interrupt the prompt is heard and dropped, as ast_waitstream_exten does.
      if (!playing.interrupts(digit)) return;
      this.playing = undefined;
      this.services.playbacks?.stopPlayback(playing.playback);
    }
    if (this.waiter) {
      const resolve = this.waiter;
      this.waiter = undefined;
      resolve(digit);
    } else if (this.queue.length < MAX_QUEUED_DIGITS) {
      this.queue.push(digit);
    }
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    const resolve = this.waiter;
    this.waiter = undefined;
    resolve?.(undefined);
    if (this.playing) this.services.playbacks?.stopPlayback(this.playing.playback);
  };

  /** The next digit, or undefined after `timeoutMs`, on hangup or when the executor moved the channel. */
  next(timeoutMs: number): Promise<string | undefined> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.ended || timeoutMs <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        resolve(undefined);
      }, timerDelay(timeoutMs));
      this.waiter = (digit) => {
        clearTimeout(timer);
        resolve(digit);
      };
    });
  }

  /** A digit already received, without waiting. */
  take(): string | undefined {
    return this.queue.shift();
  }

  /**
   * Plays `uris` one after the other until the end, a digit `interrupts` accepts (left queued for
   * next()), or a hangup. `failed` tells whether some item could not be played.
   */
  async play(uris: readonly string[], language: string, interrupts: (digit: string) => boolean = () => true): Promise<{ failed: boolean }> {
    const engine = this.services.playbacks;
    let failed = false;
    for (const uri of uris) {
      if (this.ended || this.queue.length > 0) break;
      if (!engine) return { failed: true };
      const playback = engine.playOnChannel(this.channel, { media: [uri], language, internal: true });
      this.playing = { playback, interrupts };
      const state = await engine.finished(playback);
      const interrupted = this.playing === undefined;
      this.playing = undefined;
      if (state === 'failed') {
        this.services.log.warn({ channel: this.channel.name, media: uri }, `Playback of ${uri} failed on ${this.channel.name}`);
        failed = true;
      }
      if (interrupted) break;
    }
    return { failed };
  }

  close(): void {
    this.channel.off('dtmf', this.onDigit);
    this.channel.off('hangup', this.onEnd);
    this.channel.off('pbx-interrupt', this.onEnd);
    const resolve = this.waiter;
    this.waiter = undefined;
    resolve?.(undefined);
  }
}

/**
 * After a first digit: collects more while they could still reach a longer extension of
 * `context` (each within TIMEOUT(digit)), then goes to that extension, or to `i` with
 * ${INVALID_EXTEN} (then `e`) when it does not exist. Without either the call ends.
 */
export async function collectAndGo(channel: Channel, services: PbxServices, reader: DigitReader, context: string, first: string): Promise<AppOutcome> {
  const callerId = channel.caller.number || undefined;
  let exten = first;
  while (exten.length < MAX_COLLECTED_DIGITS && services.dialplan().matchMore(context, exten, callerId)) {
    const digit = await reader.next(digitTimeoutMs(channel));
    if (digit === undefined) break;
    exten += digit;
  }
  if (channel.hangingUp) return 'stop';
  const dialplan = services.dialplan();
  if (dialplan.exists(context, exten, 1, callerId)) {
    channel.setLocation({ context, exten, priority: 1 });
    return 'jump';
  }
  for (const handler of ['i', 'e']) {
    if (dialplan.exists(context, handler, 1, callerId)) {
      services.log.info({ channel: channel.name }, `Invalid extension '${exten}' in context '${context}' on ${channel.name}`);
      channel.setSystemVariable('INVALID_EXTEN', exten);
      channel.setLocation({ context, exten: handler, priority: 1 });
      return 'jump';
    }
  }
  services.log.warn({ channel: channel.name }, `Invalid extension '${exten}', but no rule 'i' or 'e' in context '${context}'`);
  return 'stop';
}

/** The response timed out: to `t` (then `e`) of the context, else the call ends. */
export function goToTimeout(channel: Channel, services: PbxServices, context: string): AppOutcome {
  const callerId = channel.caller.number || undefined;
  for (const handler of ['t', 'e']) {
    if (services.dialplan().exists(context, handler, 1, callerId)) {
      channel.setLocation({ context, exten: handler, priority: 1 });
      return 'jump';
    }
  }
  services.log.warn({ channel: channel.name }, `Timeout, but no rule 't' or 'e' in context '${context}'`);
  return 'stop';
}
