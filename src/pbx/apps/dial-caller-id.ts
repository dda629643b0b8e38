// The caller ids Dial() gives each callee before calling it (app_dial's stored_clid and
// forced_clid): the callee channel's own caller id, which the caller sees as whom it calls, and its
// connected line, the caller id it is sent (a SIP callee's From). Options o and f change them.
import type { CallerId, Channel } from '../../core/channels/channel.ts';
import { PRESENTATION_ALLOWED } from '../../core/channels/presentation.ts';
import { parseCallerId } from '../../util/caller-id.ts';

/** What o and f asked for, fixed as Dial() starts (app_dial reads the caller then). */
export interface DialCallerIds {
  /** o[(x)]: the callee's caller id, whatever its technology gave it. */
  readonly stored?: CallerId;
  /** f[(x)]: the caller id the callee is sent instead of the caller's. */
  readonly forced?: CallerId;
  /** f without x: only forwards' channels are sent it (app_dial's legacy force_forwards_only). */
  readonly forcedOnForwardsOnly: boolean;
  /** I: the caller is not told whom it calls while the callees ring (no connected-line update). */
  readonly ignoreConnectedLine: boolean;
}

/** A caller id written in an option, bounded (a dialplan may give anything). */
const parsed = (text: string): CallerId => parseCallerId(text.slice(0, 256));

/** Reads o and f against the caller as Dial() starts. */
export function dialCallerIds(options: ReadonlyMap<string, string>, caller: Channel): DialCallerIds {
  const o = options.get('o');
  const f = options.get('f');
  return {
    ...(o === undefined ? {} : { stored: o === '' ? { name: caller.caller.name, number: caller.caller.number } : parsed(o) }),
    // f alone: the extension the caller dialed (no hint name: Patchbay has no hint names to give).
    ...(f === undefined ? {} : { forced: f === '' ? { name: '', number: caller.location.exten } : parsed(f) }),
    forcedOnForwardsOnly: f === '',
    ignoreConnectedLine: options.has('I'),
  };
}

/**
 * What app_dial gives a callee before calling it: with o the caller id asked for; else a callee its
 * technology left without a caller number shows the extension dialed (with the caller's
 * connected-line name, there being no hint name), so that the caller learns whom it calls. The
 * connected line is f's caller id (on a forward's channel only, for f alone), else the caller's.
 */
export function dialedIdentity(peer: Channel, caller: Channel, ids: DialCallerIds, forward: boolean): { caller?: CallerId; connected?: CallerId } {
  const identity: { caller?: CallerId; connected?: CallerId } = {};
  const forced = ids.forced && (forward || !ids.forcedOnForwardsOnly) ? ids.forced : undefined;
  // The callee's connected party is the caller, with the caller's presentation (a number, no event
  // of its own); a forced one is presented allowed, as app_dial's default for it.
  peer.connectedPresentation = forced ? PRESENTATION_ALLOWED : caller.callerPresentation;
  if (ids.stored) identity.caller = ids.stored;
  else if (!peer.caller.number) identity.caller = { name: peer.caller.name || caller.connected.name, number: caller.location.exten };
  if (forced) identity.connected = forced;
  else if (caller.caller.name || caller.caller.number) identity.connected = { name: caller.caller.name, number: caller.caller.number };
  return identity;
}
