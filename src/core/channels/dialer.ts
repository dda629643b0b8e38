// Calls an outbound channel and waits for the outcome, raising the Dial events that ARI reports
// for originate, /dial and the Dial() application.
import { CAUSE, dialStatusForCause } from './causes.ts';
import type { Channel } from './channel.ts';
import type { CoreEventOf } from '../../spec/events.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import { timerDelay } from '../../util/timer-delay.ts';

export type DialStatus = 'ANSWER' | 'BUSY' | 'NOANSWER' | 'CONGESTION' | 'CHANUNAVAIL' | 'CANCEL';

export interface DialOptions {
  /** Give up (hang the channel up, NOANSWER) after this long; 0 or undefined waits forever. */
  readonly timeoutMs?: number;
  /** The channel on whose behalf the call is made (Dial() caller); raised as `caller`. */
  readonly caller?: Channel;
  /** Raised as `dialstring`: what was dialed, without the technology. */
  readonly dialstring: string;
  /**
   * Raise RINGING and PROGRESS as the far end indicates them, as Asterisk's dialer does. ARI's
   * originate and /dial ask for them; Dial() keeps reporting the first and final statuses alone
   * (docs/differences.md).
   */
  readonly reportProgress?: boolean;
  /**
   * Called as the peer answers, before the Dial event with ANSWER: app_dial sets the caller's
   * DIALSTATUS and DIALEDPEER* first.
   */
  readonly answering?: () => void;
  /**
   * The Dial events after the first carry an empty `dialstring`, as app_dial publishes its
   * outcomes (captured against Asterisk 22); originate and /dial (main/dial.c) keep it.
   */
  readonly dialstringOnlyAtStart?: boolean;
  /**
   * The peer hung up forwarded (its technology left a call forward: a SIP 3xx): true when the
   * caller takes the forward (app_dial's do_forward), which raises the Dial events itself; the
   * peer's own final Dial event is then not raised.
   */
  readonly forwarded?: (peer: Channel) => boolean;
  /** Called once the peer is called, before the Dial event that starts it (a forward announces itself there). */
  readonly afterCall?: () => void;
}

function raiseDial(peer: Channel, options: DialOptions, dialstatus: string, dialstring = options.dialstring, forward?: { to: string; channel: Channel | undefined }): void {
  const caller = options.caller && !options.caller.destroyed ? options.caller : undefined;
  const forwarded = forward?.channel;
  // In Asterisk's order of fields (ast_channel_publish_dial_forward): `forward` is always there,
  // empty without a forward; Dial carries `peer` (and `caller`), not `channel`.
  const event: CoreEventOf<'Dial'> = {
    type: 'Dial',
    timestamp: formatAriDate(),
    dialstatus,
    forward: forward?.to ?? '',
    dialstring,
    ...(caller ? { caller: caller.snapshot() } : {}),
    peer: peer.snapshot(),
    ...(forwarded ? { forwarded: forwarded.snapshot() } : {}),
  };
  const channelIds = [peer.id, ...(caller ? [caller.id] : []), ...(forwarded ? [forwarded.id] : [])];
  peer.publishEvent(event, { channelIds });
}

/**
 * The Dial event of a forward (ast_channel_publish_dial_forward): the peer that forwarded, the
 * channel made for the forward (none when it was refused), `forward` where it went, status CANCEL.
 */
export function raiseDialForward(peer: Channel, caller: Channel | undefined, forwarded: Channel | undefined, forward: string): void {
  raiseDial(peer, { dialstring: '', ...(caller ? { caller } : {}) }, 'CANCEL', '', { to: forward, channel: forwarded });
}

/** A Dial event with a status of the caller's own making (app_dial's ast_channel_publish_dial). */
export function raiseDialStatus(peer: Channel, caller: Channel | undefined, dialstring: string, dialstatus: string): void {
  raiseDial(peer, { dialstring, ...(caller ? { caller } : {}) }, dialstatus);
}

/** The dialstring of a Dial event after the first (app_dial's outcomes carry none). */
const laterDialstring = (options: DialOptions): string => (options.dialstringOnlyAtStart ? '' : options.dialstring);

/** Starts the call and resolves with its outcome; the peer is hung up unless it answered. */
export function dial(peer: Channel, options: DialOptions): Promise<DialStatus> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (status: DialStatus): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      peer.off('answered', onAnswered);
      peer.off('hangup', onHangup);
      peer.off('remote-indication', onIndication);
      if (status === 'ANSWER') options.answering?.();
      if (!peer.destroyed) raiseDial(peer, options, status, laterDialstring(options));
      resolve(status);
    };
    const onAnswered = (): void => finish('ANSWER');
    const onHangup = ({ cause }: { cause: number }): void => {
      // The Dial event with the final status comes before the peer's destruction.
      if (!settled) {
        settled = true;
        if (timer) clearTimeout(timer);
        peer.off('answered', onAnswered);
        peer.off('remote-indication', onIndication);
        if (peer.callForward !== '' && options.forwarded?.(peer)) return resolve(dialStatusForCause(cause));
        raiseDial(peer, options, dialStatusForCause(cause), laterDialstring(options));
        resolve(dialStatusForCause(cause));
      }
    };
    const onIndication = (indication: string): void => {
      if (indication === 'busy') peer.hangup(CAUSE.busy);
      else if (indication === 'congestion') peer.hangup(CAUSE.congestion);
      // Asterisk's dialer reports each ringing and progress indication as a Dial status of its own,
      // which is how an app learns the far end rings (and that answering now is still refused).
      else if (options.reportProgress && indication === 'ringing') raiseDial(peer, options, 'RINGING', laterDialstring(options));
      else if (options.reportProgress && indication === 'progress') raiseDial(peer, options, 'PROGRESS', laterDialstring(options));
    };
    peer.on('answered', onAnswered);
    peer.on('hangup', onHangup);
    peer.on('remote-indication', onIndication);
    if (options.timeoutMs && options.timeoutMs > 0) {
      timer = setTimeout(() => peer.hangup(CAUSE.noAnswer), timerDelay(options.timeoutMs));
      timer.unref();
    }
    if (peer.answered) {
      raiseDial(peer, options, '');
      finish('ANSWER');
      return;
    }
    // The call is placed, then announced, as app_dial and ast_dial publish the Dial event after
    // ast_call: what the technology does as it calls (a Local ;2 announcing the variables it takes
    // from ;1) comes first. A call that failed at once has announced its final status already.
    peer.driver.call();
    options.afterCall?.();
    if (!settled) raiseDial(peer, options, '');
  });
}
