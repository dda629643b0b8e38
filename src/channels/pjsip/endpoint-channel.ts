// What a channel takes from its endpoint as chan_pjsip makes it (chan_pjsip_new), in and out alike:
// the language, accountcode and caller tag it is created with (so ChannelCreated shows them), then
// the endpoint's set_var variables, each a ChannelVarset before anything else happens to it.
import type { CallerId, Channel } from '../../core/channels/channel.ts';
import { bothPresentation } from '../../core/channels/presentation.ts';
import type { PjsipEndpoint } from './config/index.ts';

/** The fields of the channel's creation that come from its endpoint. */
export function endpointChannelInit(endpoint: PjsipEndpoint): { language?: string; accountcode?: string; callerTag?: string } {
  return {
    ...(endpoint.language ? { language: endpoint.language } : {}),
    ...(endpoint.accountcode ? { accountcode: endpoint.accountcode } : {}),
    ...(endpoint.callerIdTag ? { callerTag: endpoint.callerIdTag } : {}),
  };
}

/**
 * An outbound channel's own caller id: its endpoint's `callerid` with the presentation of its
 * `callerid_privacy` (res_pjsip_session copies the endpoint's id into an outgoing session, and
 * chan_pjsip_new names the channel's caller from it), so that Dial() keeps it and the caller's
 * connected line becomes it, as Asterisk's; none without a `callerid`.
 */
export function outboundCaller(endpoint: PjsipEndpoint): { caller?: CallerId; callerPresentation?: number } {
  const configured = endpoint.callerId;
  if (!configured?.number && !configured?.name) return {};
  return {
    caller: { name: configured.name ?? '', number: configured.number ?? '' },
    callerPresentation: bothPresentation(endpoint.callerIdPrivacy),
  };
}

/** set_var: the endpoint's variables on the new channel, in the order written. */
export function setEndpointVariables(channel: Channel, endpoint: PjsipEndpoint): void {
  // Bounded by the endpoint (MAX_CHANNEL_VARS); a channel's own limits (variables.max_channel_bytes)
  // still apply: a variable beyond them is left out, as the rest would be, and the call goes on.
  try {
    for (const variable of endpoint.channelVars) channel.setVariable(variable.name, variable.value);
  } catch {
    // The channel is full: what was set stays.
  }
}
