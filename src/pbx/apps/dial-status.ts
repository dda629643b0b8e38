// What Dial() leaves behind (app_dial's): DIALSTATUS when nobody answered, the DIAL* variables it
// blanks and fills, the callee's times, and the cause the caller keeps. One leg is one callee being
// called.
import { CAUSE } from '../../core/channels/causes.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { DialStatus } from '../../core/channels/dialer.ts';

export interface Leg {
  readonly peer: Channel;
  /** The dial string without the technology, as the Dial event and DIALEDPEERNUMBER carry it. */
  readonly dialstring: string;
  /** The leg that took this one's place when its callee forwarded the call. */
  forwardedTo?: Leg;
  /** A forward not followed: refused by option i (busy), or no channel for it (unavailable). */
  forwardedAs?: 'busy' | 'nochan';
  /** The leg is a channel that picked a ringing callee up: it keeps its own dialplan position. */
  readonly pickedUp?: true;
}

/** How app_dial's handle_cause counts a leg that ended without answering. */
function classify(cause: number | undefined): 'busy' | 'congestion' | 'nochan' | 'other' {
  switch (cause) {
    case CAUSE.busy:
      return 'busy';
    case CAUSE.congestion:
      return 'congestion';
    case CAUSE.noAnswer:
    case CAUSE.normal:
    case undefined:
      return 'other';
    default:
      return 'nochan';
  }
}

/**
 * The DIALSTATUS when nobody answered: BUSY, CONGESTION or CHANUNAVAIL only when every line
 * failed that way (busy first), NOANSWER otherwise ("our status will at least be NOANSWER").
 */
export function failureStatus(legs: readonly Leg[], unavailable: number): DialStatus {
  let busy = 0;
  let congestion = 0;
  let nochan = unavailable;
  for (const { peer, forwardedAs } of legs) {
    const kind = forwardedAs ?? classify(peer.hangupCause);
    if (kind === 'busy') busy++;
    else if (kind === 'congestion') congestion++;
    else if (kind === 'nochan') nochan++;
  }
  if (busy + congestion + nochan !== legs.length + unavailable) return 'NOANSWER';
  return busy > 0 ? 'BUSY' : congestion > 0 ? 'CONGESTION' : 'CHANUNAVAIL';
}

export function setVariable(channel: Channel, name: string, value: string): void {
  if (!channel.destroyed) channel.setSystemVariable(name, value);
}

/** The variables Dial() blanks before anything else, in app_dial's order (ChannelVarset "" each). */
export const DIAL_VARIABLES = ['DIALSTATUS', 'DIALEDPEERNUMBER', 'DIALEDPEERNAME', 'ANSWEREDTIME', 'ANSWEREDTIME_MS', 'DIALEDTIME', 'DIALEDTIME_MS', 'RINGTIME', 'RINGTIME_MS', 'PROGRESSTIME', 'PROGRESSTIME_MS'] as const;

/** A duration as app_dial leaves it: whole seconds in `base`, milliseconds in `base`_MS. */
export function setDuration(channel: Channel, base: string, ms: number): void {
  const whole = Math.max(0, Math.trunc(ms));
  setVariable(channel, base, String(Math.trunc(whole / 1000)));
  setVariable(channel, `${base}_MS`, String(whole));
}

/** Milliseconds since the callee was created, for RINGTIME and PROGRESSTIME. */
export const sinceCreated = (peer: Channel): number => Date.now() - peer.creationtime.getTime();

/**
 * The callee answered and is the one: DIALSTATUS and the peer's name and number are set before the
 * Dial event says ANSWER, and the callee's extension is cleared (app_dial, wait_for_answer), which
 * its next snapshots show.
 */
export function markAnswered(channel: Channel, leg: Leg): void {
  setVariable(channel, 'DIALSTATUS', 'ANSWER');
  setVariable(channel, 'DIALEDPEERNAME', leg.peer.name);
  setVariable(channel, 'DIALEDPEERNUMBER', leg.dialstring);
  leg.peer.setLocation({ exten: '' });
}

/**
 * The cause the caller keeps when nobody answered (app_dial sets the caller's hangupcause from its
 * callees): a busy callee's 17 before a congested one's 34 before whatever the last one ended
 * with; none when Dial's own timeout ended the ringing.
 */
export function calleesCause(legs: readonly Leg[], timedOut: boolean): number | undefined {
  if (timedOut) return undefined;
  // A forward not followed leaves the caller's cause alone, as app_dial's do_forward.
  const causes = legs.filter((leg) => !leg.forwardedAs).map(({ peer }) => peer.hangupCause).filter((cause) => cause !== undefined);
  if (causes.includes(CAUSE.busy)) return CAUSE.busy;
  if (causes.includes(CAUSE.congestion)) return CAUSE.congestion;
  return causes.at(-1);
}
