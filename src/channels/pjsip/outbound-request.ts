// The first INVITE of a call we place, as chan_pjsip writes it: whom it says is calling (the
// connected line Dial() or an originate gave the callee channel, with its presentation, and the
// redirecting party), the headers the dialplan added (PJSIP_HEADER) and the
// REFER ones, and the session's (100rel, session timers) with History-Info in Supported, as
// res_pjsip_diversion adds it to every INVITE. call.ts sends it; outbound-invite.ts writes it.
import type { Logger } from 'pino';
import type { Channel } from '../../core/channels/channel.ts';
import { TAG_HISTINFO } from '../../sip/extensions.ts';
import { newTag, type SipRequest } from '../../sip/message.ts';
import { ALLOW, type OutboundSide } from './call-types.ts';
import { outboundIdentity } from './caller-identity.ts';
import { dialplanHeaders, referHeaders, type SessionHeaders } from './headers.ts';
import { inviteRequest } from './outbound-invite.ts';
import { withSupportedTag } from './session-extensions.ts';
import { nameAddrWithUserPhone } from './user-eq-phone.ts';

/** What the call gives its first INVITE besides the channel and the side. */
export interface FirstInviteParts {
  readonly callId: string;
  readonly contact: string;
  /** Our host as the From names it (the other cluster member's, over a relayed flow). */
  readonly host: string;
  readonly userAgent: string;
  readonly offer: string;
  /** The session's headers (call-session.ts's inviteHeaders). */
  readonly sessionHeaders: ReadonlyArray<readonly [string, string]>;
  /** PJSIP_HEADER's list for this call. */
  readonly added: SessionHeaders;
  readonly log: Logger;
}

export function firstInvite(channel: Channel, side: OutboundSide, parts: FirstInviteParts): SipRequest {
  const { target, identity, route } = side;
  // res_pjsip_session's set_from_header reads the connected line only: Dial() connects the callee
  // channel to its caller, an ARI originate's callerId sets it too. The channel's own caller id is
  // its endpoint's `callerid` (who is called), never sent as the caller: with no connected line
  // From names default_from_user.
  const id = channel.connected;
  const presentation = channel.connectedPresentation;
  const redirect = { redirecting: channel.redirecting, target };
  const identified = outboundIdentity(identity, id, parts.host, newTag(), redirect, presentation);
  const from = side.userEqPhone ? nameAddrWithUserPhone(identified.from) : identified.from;
  const added = dialplanHeaders(channel, parts.added, parts.log).map(({ name, value }) => [name, value] as const);
  return inviteRequest({
    target, route, from, callId: parts.callId, contact: parts.contact, allow: ALLOW, userAgent: parts.userAgent, offer: parts.offer,
    headers: [...identified.headers, ...added, ...referHeaders(channel, added), ...withSupportedTag(parts.sessionHeaders, TAG_HISTINFO)],
  });
}
