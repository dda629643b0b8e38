// Dial(Tech/resource[&Tech2/resource2...][,timeout[,options]]): calls one or more outbound
// channels for the dialplan channel; the first to answer is connected to it, the others are hung
// up (answered elsewhere). The outcome is left in DIALSTATUS, as app_dial does. Options
// (dial-options.ts lists them and names those not acted on): b() runs a pre-dial handler (a Gosub)
// on each callee before it is called (PJSIP_HEADER(add) goes there), g carries on after the callee
// hangs up, i ignores forwards, m/r give the caller music or ringing (dial-caller-audio.ts), D and
// S act on the answered call (dial-answered.ts), Q and c choose the causes callees end with, B runs
// a pre-dial handler on the caller, o and f set the callees' caller ids (dial-caller-id.ts), e, F
// and G say where the answered callee goes (dial-after-bridge.ts). A callee that
// forwards the call (a SIP 3xx leaves it a call forward) is replaced by a channel to where it points,
// as app_dial's do_forward: `Local/<forward>@<FORWARD_CONTEXT or its context>`, or the tech/data
// given, with the Dial events of a forward. A single callee's early media (after
// its progress) reaches the caller before the answer; when nobody answers, the callees' cause stays
// with the caller for its hangup (a busy callee's 486 reaches the phone that called). The answered
// pair is put in a basic bridge ARI sees, as app_dial's ast_bridge_call does (basic-bridge.ts); the
// call behind it relays media directly (two-party-call.ts). DIAL* variables are blanked as Dial
// starts and the call's times left in ANSWEREDTIME / DIALEDTIME (and their _MS twins) as it ends.
import { CAUSE, SOFT_HANGUP } from '../../core/channels/causes.ts';
import type { CallerId, Channel } from '../../core/channels/channel.ts';
import { dial, raiseDialForward, raiseDialStatus, type DialStatus } from '../../core/channels/dialer.ts';
import { connectChannels } from '../../core/channels/direct-connect.ts';
import { TwoPartyCall } from '../../core/channels/two-party-call.ts';
import type { Indication } from '../../core/channels/technology.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import type { PbxServices } from '../application-services.ts';
import { inheritFromCaller } from '../../core/channels/inherit.ts';
import type { Redirecting } from '../../core/channels/redirecting.ts';
import { presetHangupCause } from '../hangup-cause.ts';
import { timerDelay } from '../../util/timer-delay.ts';
import { offerPickup } from '../../core/channels/pickup.ts';
import { checkDialData, dialFeatureRights, IMPLEMENTED_DIAL_OPTIONS, parseDialOptions, parseHangupCause, unsupportedAtRun } from './dial-options.ts';
import { startCallerAudio } from './dial-caller-audio.ts';
import { playAnnouncements, runCalleeGosub, type CalleeGosubOutcome } from './dial-before-bridge.ts';
import { armCallLimit, parseCallLimit } from './dial-limit.ts';
import { armDurationStop, DIAL_DTMF_BETWEEN_MS, durationStop, parseDialDigits, sendAnswerDigits } from './dial-answered.ts';
import { sendDtmf } from '../../core/channels/dtmf-sender.ts';
import { dialCallerIds, dialedIdentity, type DialCallerIds } from './dial-caller-id.ts';
import { armCalleeHangupExtension, calleeGoesOn, sendBothTo } from './dial-after-bridge.ts';

export { parseDialOptions } from './dial-options.ts';

interface Leg {
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

/** Forwards one Dial() follows (Asterisk's default Max-Forwards, which each forward spends); further ones fail the leg. */
const MAX_FORWARDS = 20;

/**
 * Where a forwarded callee sends the call (app_dial's do_forward): a `tech/data` forward as it
 * is, otherwise `Local/<forward>@<context>` in the callee's FORWARD_CONTEXT, else its context.
 */
function forwardTarget(peer: Channel): string {
  const to = peer.callForward;
  if (to.includes('/')) return to;
  return `Local/${to}@${peer.getVariable('FORWARD_CONTEXT') || peer.location.context}`;
}

/**
 * The redirecting party of a forward's channel (app_dial's do_forward): the forwarding callee's,
 * which its technology filled from the redirect (a SIP 3xx's Diversion, To and Contact); a call
 * not redirected before is now redirected from the extension the caller dialed.
 */
function forwardedRedirecting(original: Channel, caller: Channel): Redirecting {
  const redirecting = original.redirecting;
  if (redirecting.from.number) return redirecting;
  return { ...redirecting, from: { ...redirecting.from, number: caller.location.exten } };
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
function failureStatus(legs: readonly Leg[], unavailable: number): DialStatus {
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

function setVariable(channel: Channel, name: string, value: string): void {
  if (!channel.destroyed) channel.setSystemVariable(name, value);
}

/** The variables Dial() blanks before anything else, in app_dial's order (ChannelVarset "" each). */
const DIAL_VARIABLES = ['DIALSTATUS', 'DIALEDPEERNUMBER', 'DIALEDPEERNAME', 'ANSWEREDTIME', 'ANSWEREDTIME_MS', 'DIALEDTIME', 'DIALEDTIME_MS', 'RINGTIME', 'RINGTIME_MS', 'PROGRESSTIME', 'PROGRESSTIME_MS'] as const;

/** A duration as app_dial leaves it: whole seconds in `base`, milliseconds in `base`_MS. */
function setDuration(channel: Channel, base: string, ms: number): void {
  const whole = Math.max(0, Math.trunc(ms));
  setVariable(channel, base, String(Math.trunc(whole / 1000)));
  setVariable(channel, `${base}_MS`, String(whole));
}

/** Milliseconds since the callee was created, for RINGTIME and PROGRESSTIME. */
const sinceCreated = (peer: Channel): number => Date.now() - peer.creationtime.getTime();

/**
 * The callee answered and is the one: DIALSTATUS and the peer's name and number are set before the
 * Dial event says ANSWER, and the callee's extension is cleared (app_dial, wait_for_answer), which
 * its next snapshots show.
 */
function markAnswered(channel: Channel, leg: Leg): void {
  setVariable(channel, 'DIALSTATUS', 'ANSWER');
  setVariable(channel, 'DIALEDPEERNAME', leg.peer.name);
  setVariable(channel, 'DIALEDPEERNUMBER', leg.dialstring);
  leg.peer.setLocation({ exten: '' });
}

/** What ringing the legs came to: the leg that answered, if any, and how the others ended. */
interface RingOutcome {
  readonly winner: Leg | undefined;
  /** Dial's timeout ended the ringing (not the callees). */
  readonly timedOut: boolean;
  /** The early media connection to the winner, kept as the call's (undefined: connect at answer). */
  readonly earlyMedia: (() => void) | undefined;
}

/**
 * Calls every leg at once; resolves with the one that answered first, if any. With `earlyMedia`
 * (one leg, no ringing of our own), the callee's progress connects the media of the two channels
 * before the answer, as app_dial passes a single callee's early media (a provider's announcement,
 * its ringback tone) to the caller and the caller's audio to it.
 */
function ring(channel: Channel, services: PbxServices, legs: Leg[], timing: { timeoutMs: number; alreadyRinging: boolean; entertained: boolean; earlyMedia: boolean; progressDigits: string }, forwarding: { ignore: boolean; cancelTimeout: boolean; cancelCause: number | undefined; loserCause: number; ids: DialCallerIds }): Promise<RingOutcome> {
  const { timeoutMs, alreadyRinging, entertained, earlyMedia, progressDigits } = timing;
  return new Promise((resolve) => {
    let pending = legs.length;
    let settled = false;
    let sentRinging = alreadyRinging;
    let timedOut = false;
    /** The leg whose answer was announced first: the others lose the race. */
    let claimed: Leg | undefined;
    /** RINGTIME and PROGRESSTIME are set once, at the first callee to ring or progress. */
    let ringTimed = false;
    let progressTimed = false;
    let early: { peer: Channel; disconnect: () => void } | undefined;
    // Armed before the legs' own timers (same delay), so it has fired when they end.
    const timer = timeoutMs > 0 ? setTimeout(() => (timedOut = true), timerDelay(timeoutMs)) : undefined;
    timer?.unref();
    const forwarders = new Map<Channel, (indication: Indication) => void>();
    const redirectors = new Map<Channel, () => void>();
    const withdrawals: (() => void)[] = [];
    const settle = (winner: Leg | undefined): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      for (const withdraw of withdrawals) withdraw();
      channel.off('hangup', onCallerHangup);
      for (const [peer, forwarder] of forwarders) peer.off('remote-indication', forwarder);
      for (const [peer, passOn] of redirectors) peer.off('remote-redirecting', passOn);
      const kept = early && winner?.peer === early.peer ? early.disconnect : undefined;
      if (early && !kept) early.disconnect();
      resolve({ winner, timedOut, earlyMedia: kept });
    };
    // The caller gave up: every leg still ringing is cancelled with the caller's cause (app_dial's
    // hang-up tree after a cancel: a CANCELled SIP caller's 127 reaches the callees, 16 without one).
    const onCallerHangup = (): void => {
      const cause = forwarding.cancelCause ?? (channel.hangupCause || CAUSE.normal);
      for (const { peer } of legs) if (!peer.hangingUp) peer.hangup(cause);
    };
    channel.once('hangup', onCallerHangup);
    // Starts a leg: its indications reach the caller, and it is dialed (`afterCall`: a forward's
    // Dial event, between the call and the Dial event that starts it).
    /** z: a forward followed cancels the timeout, for the forward's leg and Dial's own (app_dial's `to = -1`). */
    let legTimeoutMs = timeoutMs;
    const start = (leg: Leg, afterCall?: () => void): void => {
      // Progress from the called side reaches the caller, ringing once.
      const forwarder = (indication: Indication): void => {
        if (indication === 'ringing' && !ringTimed) {
          ringTimed = true;
          setDuration(channel, 'RINGTIME', sinceCreated(leg.peer));
        } else if (indication === 'progress' && !progressTimed) {
          progressTimed = true;
          setDuration(channel, 'PROGRESSTIME', sinceCreated(leg.peer));
        }
        if (channel.hangingUp) return;
        // An answered caller is told too, as app_dial does: its technology cannot show it, so the
        // core plays it the ring tone in band (indication-tones.ts), and a blind transfer's REFER
        // subscription following it reports 180, then 200 with that audio (refer-progress.ts).
        // With m or r(tone) the caller hears Dial's own audio: no callee's ringing reaches it.
        if (indication === 'ringing' && !sentRinging && !entertained) {
          sentRinging = true;
          channel.indicate('ringing');
        } else if (indication === 'stop' && legs.length === 1 && !alreadyRinging && !entertained) {
          // A single callee stopped its indications (app_dial's -1): so does the caller.
          sentRinging = false;
          channel.indicate('stop');
        } else if (indication === 'progress') {
          // As app_dial: with r the caller keeps its ringing, no progress; of several callees,
          // progress reaches the caller only until one has rung.
          if (!alreadyRinging && (legs.length === 1 || !sentRinging)) channel.indicate('progress');
          if (earlyMedia && !early && !channel.answered && !leg.peer.hangingUp) early = { peer: leg.peer, disconnect: connectChannels(channel, leg.peer) };
          // D(::progress): digits to the callee at its progress.
          if (progressDigits !== '' && !leg.peer.hangingUp) void sendDtmf(leg.peer, progressDigits, { between: DIAL_DTMF_BETWEEN_MS });
        }
      };
      forwarders.set(leg.peer, forwarder);
      leg.peer.on('remote-indication', forwarder);
      // A single callee's redirect (a SIP 181) reaches the caller unless I, as app_dial passes
      // AST_CONTROL_REDIRECTING on; its ringing may be indicated anew after.
      const passOn = (): void => {
        if (legs.length !== 1 || forwarding.ids.ignoreConnectedLine || channel.hangingUp) return;
        channel.indicateRedirecting(leg.peer.redirecting);
        sentRinging = alreadyRinging;
      };
      redirectors.set(leg.peer, passOn);
      leg.peer.on('remote-redirecting', passOn);
      withdrawals.push(offerPickup(leg.peer, (picker) => pickedUp(leg, picker)));
      const answering = (): void => {
        if (claimed || settled || channel.hangingUp) return;
        claimed = leg;
        markAnswered(channel, leg);
      };
      const forwarded = (): boolean => forward(leg);
      void dial(leg.peer, { timeoutMs: legTimeoutMs, caller: channel, dialstring: leg.dialstring, answering, dialstringOnlyAtStart: true, forwarded, ...(afterCall ? { afterCall } : {}) }).then((status) => {
        // A leg forwarded to a new channel: the new leg's outcome is the one counted.
        if (leg.forwardedTo) return;
        if (status === 'ANSWER') {
          if (settled || channel.hangingUp) {
            // Lost the race to another leg, or there is no caller left to connect to.
            leg.peer.hangup(settled ? CAUSE.answeredElsewhere : CAUSE.normal);
          } else {
            // Q(cause): the others end with that cause instead of "answered elsewhere".
            for (const other of legs) if (other !== leg && !other.peer.hangingUp) other.peer.hangup(forwarding.loserCause);
            settle(leg);
            return;
          }
        }
        if (--pending === 0) settle(undefined);
      });
    };
    // Another channel picked a ringing callee up (Pickup(), the pickup extension: core/channels/pickup.ts).
    // Asterisk masquerades the picker into the callee, which app_dial then sees answer; here the
    // picker is the callee that answered, and every leg is cancelled as answered elsewhere.
    const pickedUp = (leg: Leg, picker: Channel): boolean => {
      if (claimed || settled || channel.hangingUp) return false;
      const taken: Leg = { peer: picker, dialstring: leg.dialstring, pickedUp: true };
      claimed = taken;
      // As markAnswered, but the picker keeps its own dialplan position (its Pickup() is running).
      setVariable(channel, 'DIALSTATUS', 'ANSWER');
      setVariable(channel, 'DIALEDPEERNAME', picker.name);
      setVariable(channel, 'DIALEDPEERNUMBER', leg.dialstring);
      for (const other of legs) if (!other.peer.hangingUp) other.peer.hangup(CAUSE.answeredElsewhere);
      // The callees' Dial events said CANCEL as they ended; the picker's says who answered.
      raiseDialStatus(picker, channel, '', 'ANSWER');
      settle(taken);
      return true;
    };
    // A callee hung up forwarded (a SIP 3xx): app_dial's do_forward, true when it took the forward.
    let forwards = 0;
    const forward = (leg: Leg): boolean => {
      if (settled || channel.hangingUp) return false;
      const original = leg.peer;
      const to = original.callForward;
      const target = forwardTarget(original);
      const data = target.slice(target.indexOf('/') + 1);
      services.log.info({ channel: channel.name, forwarder: original.name, target }, 'Dial: call forwarded');
      if (forwarding.ignore) {
        // Option i: the forward is refused, and the callee counts as busy.
        raiseDialForward(original, channel, undefined, to);
        raiseDialStatus(original, channel, data, 'BUSY');
        leg.forwardedAs = 'busy';
        return true;
      }
      let peer: Channel | undefined;
      if (forwards < MAX_FORWARDS) {
        try {
          peer = services.channels.request(target, { requestor: channel });
        } catch (err) {
          services.log.warn({ channel: channel.name, target, err: (err as Error).message }, 'Dial: forwarding failed to create a channel');
        }
      } else services.log.warn({ channel: channel.name, target }, `Dial: more than ${MAX_FORWARDS} forwards, not followed`);
      if (!peer) {
        raiseDialStatus(original, channel, data, 'BUSY');
        leg.forwardedAs = 'nochan';
        return true;
      }
      forwards++;
      // As app_dial sets the forward's channel up: the caller's inherited variables, who forwarded it, AppDial.
      inheritFromCaller(peer, channel, { connectedLine: false });
      peer.redirecting = forwardedRedirecting(original, channel);
      // ast_channel_update_redirecting, for a single callee without I: the caller learns the call
      // was redirected, and its technology tells the far end (a SIP caller not answered: 181).
      if (legs.length === 1 && !forwarding.ids.ignoreConnectedLine) channel.indicateRedirecting(peer.redirecting);
      peer.setSystemVariable('FORWARDERNAME', original.name);
      peer.stageIdentity({ ...peer.location, exten: channel.location.exten, appName: 'AppDial', appData: '(Outgoing Line)' }, dialedIdentity(peer, channel, forwarding.ids, true));
      const next: Leg = { peer, dialstring: data };
      leg.forwardedTo = next;
      legs[legs.indexOf(leg)] = next;
      // A single callee's ringing is over (app_dial stops the caller's indication): the forward rings anew.
      if (legs.length === 1 && !alreadyRinging && !entertained && !channel.hangingUp) {
        sentRinging = false;
        channel.indicate('stop');
      }
      if (forwarding.cancelTimeout) {
        legTimeoutMs = 0;
        if (timer) clearTimeout(timer);
      }
      start(next, () => raiseDialForward(original, channel, peer, to));
      return true;
    };
    for (const leg of [...legs]) start(leg);
    // I: no connected-line update from the callee reaches the caller while it rings.
    if (legs.length === 1 && !settled && !forwarding.ids.ignoreConnectedLine) showCalleeToCaller(channel, legs[0]!.peer);
  });
}

/**
 * The cause the caller keeps when nobody answered (app_dial sets the caller's hangupcause from its
 * callees): a busy callee's 17 before a congested one's 34 before whatever the last one ended
 * with; none when Dial's own timeout ended the ringing.
 */
function calleesCause(legs: readonly Leg[], timedOut: boolean): number | undefined {
  if (timedOut) return undefined;
  // A forward not followed leaves the caller's cause alone, as app_dial's do_forward.
  const causes = legs.filter((leg) => !leg.forwardedAs).map(({ peer }) => peer.hangupCause).filter((cause) => cause !== undefined);
  if (causes.includes(CAUSE.busy)) return CAUSE.busy;
  if (causes.includes(CAUSE.congestion)) return CAUSE.congestion;
  return causes.at(-1);
}

function requestLegs(channel: Channel, services: PbxServices, targets: readonly string[], ids: DialCallerIds): { legs: Leg[]; unavailable: number } {
  const legs: Leg[] = [];
  let unavailable = 0;
  for (const target of targets) {
    try {
      const peer = services.channels.request(target, { requestor: channel });
      // app_dial marks each callee so until an application runs on it (CDR ignores AppDial changes),
      // and gives it the caller's extension.
      // app_dial leaves the number dialed on the callee (its DIALEDPEERNUMBER) before anything else.
      const dialstring = target.slice(target.indexOf('/') + 1);
      peer.setSystemVariable('DIALEDPEERNUMBER', dialstring);
      inheritFromCaller(peer, channel, { connectedLine: false });
      peer.stageIdentity({ ...peer.location, exten: channel.location.exten, appName: 'AppDial', appData: '(Outgoing Line)' }, dialedIdentity(peer, channel, ids, false));
      legs.push({ peer, dialstring });
    } catch (err) {
      unavailable++;
      services.log.warn({ channel: channel.name, target, err: (err as Error).message }, `Dial: unable to create channel ${target}`);
      // app_dial gives the caller the request's cause when the last destination cannot be made
      // (chan_pjsip's is "no route to destination"), so a caller hung up after a CHANUNAVAIL posts a
      // FAILED record (cdr.c's disposition from the cause); a callee's outcome replaces it later.
      if (target === targets.at(-1)) presetHangupCause(channel, CAUSE.noRoute);
    }
  }
  return { legs, unavailable };
}

/**
 * A single destination: app_dial tells the caller at once whom it calls (the callee's caller id as
 * its connected line), after the Dial event that starts the call. Captured against Asterisk 22 for
 * a SIP caller with a caller id (docs/differences.md); a caller without one (a Local `;2` from an
 * originate) got no such update there, so none is made for it here either.
 */
function showCalleeToCaller(channel: Channel, peer: Channel): void {
  if (channel.hangingUp || peer.hangingUp) return;
  if (!channel.caller.name && !channel.caller.number) return;
  const { name, number } = peer.caller;
  channel.connectedPresentation = peer.callerPresentation;
  if (channel.connected.name !== name || channel.connected.number !== number) channel.setConnected({ name, number });
  // Indicated to the caller's technology as app_dial's update_connected_line_from_peer does.
  channel.indicateConnectedLine('answer');
}

/**
 * Dial() returns -1 and the dialplan run ends: the hang-up is announced once, as the soft
 * APPUNLOAD request, with `cause` kept for the channel (also when Dial ran in a subroutine).
 */
function hangUpAtEnd(channel: Channel, cause: number): void {
  if (!channel.hangingUp) channel.hangup(cause, { soft: SOFT_HANGUP.appUnload });
}

/**
 * The answered callee is not bridged: a party hung up before (during A's announcements or D's
 * digits), or U's subroutine asked otherwise (GOSUB_RESULT). The callee is hung up; the caller
 * goes on as app_dial lets it: with the status given, at the GOTO's place, or (ABORT, a party
 * gone) only with g.
 */
function endBeforeBridge(channel: Channel, peer: Channel, outcome: CalleeGosubOutcome, goOn: boolean, peerGoesOn: ((peer: Channel) => boolean) | undefined): AppOutcome {
  const peerCause = peer.hangupCause ?? CAUSE.normal;
  // F: a callee still up goes on in the dialplan, as app_dial's error path starts its after-bridge goto.
  if (!peer.hangingUp && !peerGoesOn?.(peer)) peer.hangup(CAUSE.normal);
  if (channel.hangingUp) return 'stop';
  switch (outcome.kind) {
    case 'status':
      setVariable(channel, 'DIALSTATUS', outcome.status);
      return 'next';
    case 'continue':
      return 'next';
    case 'goto':
      channel.setLocation(outcome.location);
      return 'jump';
    case 'abort':
    case 'bridge':
      if (goOn) return 'next';
      hangUpAtEnd(channel, outcome.kind === 'abort' ? CAUSE.normal : peerCause);
      return 'stop';
  }
}

export const dialApplication: DialplanApplication = {
  name: 'Dial',
  synopsis: `Calls one or more devices and connects the first to answer (DIALSTATUS), following their call forwards; options ${[...IMPLEMENTED_DIAL_OPTIONS.keys()].join(', ')}`,
  checkData: checkDialData,
  async execute(channel, [targetList, timeout, optionText], services): Promise<AppOutcome> {
    // Blanked first, whatever follows (a hung-up caller, bad arguments), as app_dial does.
    for (const name of DIAL_VARIABLES) setVariable(channel, name, '');
    if (channel.hangingUp) {
      setVariable(channel, 'DIALSTATUS', 'CANCEL');
      return 'stop';
    }
    if (!targetList || targetList.trim() === '') {
      services.log.warn({ channel: channel.name }, 'Dial requires an argument (technology/resource)');
      return 'stop';
    }
    const targets = targetList.split('&').map((target) => target.trim()).filter((target) => target !== '');
    if (targets.some((target) => !/^[^/]+\/./.test(target))) {
      services.log.warn({ channel: channel.name, data: targetList }, 'Dial argument takes format (technology/resource)');
      setVariable(channel, 'DIALSTATUS', 'INVALIDARGS');
      return 'stop';
    }
    const options = parseDialOptions(optionText ?? '');
    const at = { context: channel.location.context, exten: channel.location.exten, priority: channel.location.priority };
    const where = `${at.context},${at.exten},${at.priority}`;
    for (const line of unsupportedAtRun(where, optionText ?? '', options)) services.log.warn({ channel: channel.name, at: where }, line);
    const stopAfter = durationStop(options.get('S'));
    if (stopAfter === 'invalid') {
      services.log.warn({ channel: channel.name }, `Dial does not accept S(${options.get('S')})`);
      return 'stop';
    }
    // L(x[:y[:z]]) replaces S, as app_dial's ast_bridge_timelimit undoes S.
    const callLimit = parseCallLimit(options.get('L'));
    if (callLimit === 'invalid') {
      services.log.warn({ channel: channel.name }, `Bridge does not accept L(${options.get('L')})`);
      return 'stop';
    }
    const loserCause = options.has('Q') ? parseHangupCause(options.get('Q')!) : undefined;
    if (options.has('Q') && loserCause === undefined) services.log.warn({ channel: channel.name }, `Invalid cause given to Dial(...Q(<cause>)): "${options.get('Q')}"`);
    const digits = parseDialDigits(options.get('D'));
    // C: the caller's call records start again now, as app_dial's ast_cdr_reset before dialing.
    if (options.has('C')) services.records?.cdr.reset(channel.id, false);
    // o, f: the callees' caller ids, read from the caller before B runs, as app_dial reads them.
    const ids = dialCallerIds(options, channel);
    // B(context^exten^priority[(args)]): a pre-dial handler on the caller, before the callees exist.
    const callerPreDial = options.get('B');
    if (callerPreDial) {
      if (!services.runSubroutineWithin) services.log.warn({ channel: channel.name }, 'Dial: pre-dial handlers are not available');
      else await services.runSubroutineWithin(channel, callerPreDial.replaceAll('^', ','));
      if (channel.hangingUp) {
        setVariable(channel, 'DIALSTATUS', 'CANCEL');
        return 'stop';
      }
    }
    const seconds = Number.parseFloat(timeout ?? '');
    const timeoutMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;

    let { legs, unavailable } = requestLegs(channel, services, targets, ids);
    // b(context^exten^priority[(arg1^...)]): a pre-dial handler on each callee before it is called.
    const preDial = options.get('b');
    if (preDial && legs.length > 0) {
      if (!services.runSubroutine) services.log.warn({ channel: channel.name }, 'Dial: pre-dial handlers are not available');
      else {
        for (const { peer } of legs) await services.runSubroutine(peer, preDial.replaceAll('^', ','));
        const gone = legs.filter(({ peer }) => peer.hangingUp);
        legs = legs.filter(({ peer }) => !peer.hangingUp);
        unavailable += gone.length;
      }
      if (channel.hangingUp) {
        for (const { peer } of legs) peer.hangup(CAUSE.normal);
        setVariable(channel, 'DIALSTATUS', 'CANCEL');
        return 'stop';
      }
    }
    if (legs.length === 0) {
      setVariable(channel, 'DIALSTATUS', 'CHANUNAVAIL');
      return 'next';
    }
    // m, r: what the caller hears of Dial itself, ended when Dial() ends or a callee answers.
    const callerAudio = startCallerAudio(channel, services, options);
    const { ringBack, entertained } = callerAudio;
    const timing = { timeoutMs, alreadyRinging: ringBack, entertained, earlyMedia: legs.length === 1 && !ringBack && !entertained, progressDigits: digits.progress };
    const { winner, timedOut, earlyMedia } = await ring(channel, services, legs, timing, {
      ignore: options.has('i'),
      cancelTimeout: options.has('z'),
      // c: callees cancelled because the caller gave up are told it was answered elsewhere.
      cancelCause: options.has('c') ? CAUSE.answeredElsewhere : undefined,
      loserCause: loserCause ?? CAUSE.answeredElsewhere,
      ids,
    });
    // Without r or m, the ring tone an answered caller heard while nobody answered goes on after
    // Dial() (until a file, another indication or the hang-up), as app_dial leaves it.
    callerAudio.stop();

    if (!winner) {
      if (channel.hangingUp) {
        setVariable(channel, 'DIALSTATUS', 'CANCEL');
        return 'stop';
      }
      setVariable(channel, 'DIALSTATUS', failureStatus(legs, unavailable));
      const cause = calleesCause(legs, timedOut);
      if (cause !== undefined) presetHangupCause(channel, cause);
      return 'next';
    }

    const { peer } = winner;
    // app_dial clears the caller's generator at the answer: a ring tone of its own ends.
    channel.endInbandIndication();
    if (!channel.answered) channel.answer();
    // The early media's connection gives way to the call's own (which also passes hold and transfers).
    earlyMedia?.();
    // A, U, S, D between the answer and the bridge, in app_dial's order.
    const announcement = options.get('A');
    if (announcement) await playAnnouncements(channel, peer, services, announcement);
    // G(place): both go into the dialplan instead of being bridged (app_dial's OPT_GOTO, after A).
    const both = options.get('G');
    if (both && !winner.pickedUp && !peer.hangingUp && !channel.hangingUp) {
      const went = sendBothTo(channel, peer, both, services);
      if (went === 'next') peer.hangup(CAUSE.normal);
      return went;
    }
    const gosub = options.get('U');
    const outcome: CalleeGosubOutcome = gosub && !peer.hangingUp && !channel.hangingUp ? await runCalleeGosub(channel, peer, services, gosub) : { kind: 'bridge' };
    // S(x): the callee is hung up x seconds after it answered.
    const disarmStop = stopAfter === undefined || callLimit !== undefined || outcome.kind !== 'bridge' ? undefined : armDurationStop(peer, stopAfter);
    // D: the digits to the callee, then to the caller, before they are connected.
    if (outcome.kind === 'bridge') await sendAnswerDigits(channel, peer, digits);
    // e and F: where the callee goes once the call ends (app_dial's setup_peer_after_bridge_goto).
    // A picker keeps its own dialplan run: neither applies to it.
    if (!winner.pickedUp) armCalleeHangupExtension(options, channel, peer, services);
    const peerGoesOn = winner.pickedUp ? undefined : calleeGoesOn(options, at, services);
    if (outcome.kind !== 'bridge' || peer.hangingUp || channel.hangingUp) {
      disarmStop?.();
      return endBeforeBridge(channel, peer, outcome, options.has('g'), peerGoesOn);
    }
    // The basic bridge ARI sees (none where the services have no bridges): created, then the
    // callee's cleared extension shows as it enters.
    const bridge = services.bridges?.createBasic();
    if (!peer.hangingUp && !winner.pickedUp) peer.setDialplan(peer.location);
    // The bridge is gone: the call's times, then DIALSTATUS again (end_bridge_callback, then
    // app_dial's exit), at once, while a caller that hung up still exists.
    const onOwnerExit = (): void => {
      const now = Date.now();
      setDuration(channel, 'ANSWEREDTIME', channel.answeredAt === undefined ? 0 : now - channel.answeredAt);
      setDuration(channel, 'DIALEDTIME', now - channel.creationtime.getTime());
      setVariable(channel, 'DIALSTATUS', 'ANSWER');
    };
    const rights = dialFeatureRights(options, channel.getVariable('BRIDGE_FEATURES'));
    const features = services.features?.forParties(new Map([[channel, rights.caller], [peer, rights.callee]]));
    const call = TwoPartyCall.connect(channel, peer, [channel], { bridge, onOwnerExit, ...(peerGoesOn ? { goesOn: peerGoesOn } : {}), ...(features ? { features } : {}) });
    // L: the limit runs from the bridge, with its sounds.
    const disarmLimit = callLimit === undefined ? undefined : armCallLimit(channel, peer, services, callLimit);
    const disarm = (): void => {
      disarmStop?.();
      disarmLimit?.();
    };
    const exit = await call.exitOf(channel);
    disarm();
    switch (exit.kind) {
      case 'hungup':
        // The call hung the callee up with the caller's cause.
        return 'stop';
      case 'peer-hungup':
        // The called party hung up: the caller carries on with option g, otherwise its dialplan
        // run ends (the one APPUNLOAD hang-up request, as Asterisk's) with the callee's cause.
        if (options.has('g')) return 'next';
        hangUpAtEnd(channel, exit.cause);
        return 'stop';
      case 'redirected':
        // The callee transferred the caller (blind): its dialplan goes on there, as Asterisk's after-bridge goto.
        channel.setLocation({ context: exit.location.context, exten: exit.location.exten, priority: 1 });
        return 'jump';
      case 'done':
        // The caller transferred the callee away, or another channel took its place.
        hangUpAtEnd(channel, CAUSE.normal);
        return 'stop';
    }
  },
};
