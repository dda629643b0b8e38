// The implicit subscription of a REFER received on a dialplan call (RFC 3515 §2.4.4, RFC 6665):
// the NOTIFYs that tell the transferring phone how its transfer went, in the order Asterisk 22's
// res_pjsip_refer sends them (captured, docs/sip.md "Transfers (REFER)"):
// - nothing after the 202 until there is news: the "100 Trying" is held back and sent just before
//   the first NOTIFY that reports something (Asterisk defers it the same way, `sent_100`);
// - news of a blind transfer comes from the transferee (TransfereeWatch below): ringing (180) and
//   progress (183) keep the subscription active; answered, joined a bridge or sent audio (200),
//   busy (486), congestion or hung up first (503) end it;
// - an attended transfer, or a transfer that failed, reports its outcome at once (100, then it).
// The final NOTIFY says `terminated;reason=noresource` (pjsip's for REFER). Bounded: the
// subscription lasts 600 s (pjsip's PJSIP_XFER_EXPIRES; `active;expires=` counts down from it),
// then ends with the last status reported; a NOTIFY the phone refuses (481, any other error without
// Retry-After) or never answers ends it at once, as pjsip's evsub does. While it lasts it holds the
// call's dialog (call-dialog-requests.ts): the BYE the call may send meanwhile waits for its end.
import type { Channel } from '../../core/channels/channel.ts';
import type { Indication } from '../../core/channels/driver.ts';
import type { SipResponse } from '../../sip/message.ts';
import type { DialogUsage } from './call-dialog-requests.ts';

/** How long the subscription lasts unless the transfer ends first (pjsip's PJSIP_XFER_EXPIRES). */
export const REFER_SUBSCRIPTION_SECONDS = 600;

/** Reason phrases of the statuses a sipfrag of ours can carry. */
const REASONS: Readonly<Record<number, string>> = {
  100: 'Trying',
  180: 'Ringing',
  183: 'Session Progress',
  200: 'OK',
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  481: 'Call/Transaction Does Not Exist',
  486: 'Busy Here',
  500: 'Server Internal Error',
  503: 'Service Unavailable',
  603: 'Decline',
};

export function reasonPhrase(status: number): string | undefined {
  return REASONS[status];
}

function sipfragLine(status: number): string {
  return `SIP/2.0 ${status} ${REASONS[status] ?? ''}`.trimEnd();
}

export class ReferProgress {
  readonly #usage: DialogUsage;
  readonly #contact: string;
  readonly #expiresAt: number;
  readonly #timer: NodeJS.Timeout;
  #sent100 = false;
  #lastStatus = 100;
  #ended = false;
  /** Told once when the subscription ends, for whatever reason (the transferee watch detaches). */
  onEnd: (() => void) | undefined;

  constructor(usage: DialogUsage, contact: string, lifetimeSeconds = REFER_SUBSCRIPTION_SECONDS) {
    this.#usage = usage;
    this.#contact = contact;
    this.#expiresAt = Date.now() + lifetimeSeconds * 1000;
    this.#timer = setTimeout(() => this.finish(this.#lastStatus), lifetimeSeconds * 1000);
    this.#timer.unref();
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** News that does not end the transfer (180, 183, 100): an active NOTIFY. */
  progress(status: number): void {
    if (this.#ended) return;
    this.#send100First(status);
    this.#notify(status, false);
  }

  /** The transfer's outcome: the last NOTIFY, and the subscription is over. */
  finish(status: number): void {
    if (this.#ended) return;
    this.#send100First(status);
    this.#notify(status, true);
    this.#end();
  }

  #send100First(status: number): void {
    if (this.#sent100) return;
    this.#sent100 = true;
    if (status !== 100) this.#notify(100, false);
  }

  #notify(status: number, final: boolean): void {
    this.#lastStatus = status;
    const remaining = Math.max(0, Math.floor((this.#expiresAt - Date.now()) / 1000));
    const sent = this.#usage.send(
      'NOTIFY',
      [
        ['Event', 'refer'],
        ['Subscription-State', final ? 'terminated;reason=noresource' : `active;expires=${remaining}`],
        ['Contact', this.#contact],
      ],
      `${sipfragLine(status)}\r\n`,
      'message/sipfrag;version=2.0',
      (response) => this.#answered(response),
      () => this.#end(),
    );
    if (!sent && !final) this.#end();
  }

  /** RFC 6665 §4.2.2 (as pjsip's evsub): a refused or unanswered NOTIFY ends the subscription. */
  #answered(response: SipResponse): void {
    if (response.status < 300 || this.#ended) return;
    if (response.status !== 481 && response.status !== 408 && response.has('retry-after')) return;
    this.#end();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#timer);
    this.#usage.release();
    const onEnd = this.onEnd;
    this.onEnd = undefined;
    onEnd?.();
  }
}

/** The sipfrag status an indication towards the transferee reports, and whether it ends the transfer. */
const INDICATED: Partial<Record<Indication, { status: number; final: boolean }>> = {
  ringing: { status: 180, final: false },
  progress: { status: 183, final: false },
  busy: { status: 486, final: true },
  congestion: { status: 503, final: true },
  answer: { status: 200, final: true },
};

/**
 * Follows a blind transfer's transferee for its subscription, as res_pjsip_refer's frame hook and
 * bridge subscription do: what the transferee is told (indications), its answer, its entering a
 * bridge, the first audio written to it, its hangup. Detaches when the subscription ends.
 */
export function watchTransferee(transferee: Channel, progress: ReferProgress): void {
  if (transferee.hangingUp) return progress.finish(503);
  // An indication repeated (Ringing(), then Dial()'s ringing) is news once: Asterisk keeps a
  // channel's visible indication and does not indicate it again (checked: one 180).
  let shown: Indication | undefined;
  const onIndicated = (indication: Indication): void => {
    const news = INDICATED[indication];
    if (!news || indication === shown) return;
    shown = indication;
    if (news.final) progress.finish(news.status);
    else progress.progress(news.status);
  };
  const onAnswered = (): void => progress.finish(200);
  const onBridged = (): void => progress.finish(200);
  const onHangup = (): void => progress.finish(503);
  // Audio to the transferee with nothing said before it means its call was answered (Playback()…).
  const onAudio = <F>(frame: F): F => {
    queueMicrotask(() => progress.finish(200));
    return frame;
  };
  transferee.on('indicated', onIndicated);
  transferee.on('answered', onAnswered);
  transferee.on('bridge-entered', onBridged);
  transferee.on('hangup', onHangup);
  transferee.addAudioHook('write', onAudio);
  progress.onEnd = () => {
    transferee.off('indicated', onIndicated);
    transferee.off('answered', onAnswered);
    transferee.off('bridge-entered', onBridged);
    transferee.off('hangup', onHangup);
    transferee.removeAudioHook('write', onAudio);
  };
}
