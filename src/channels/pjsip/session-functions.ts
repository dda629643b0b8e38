// chan_pjsip's session functions: PJSIP_MEDIA_OFFER(audio|video) (the codecs of our next offer),
// PJSIP_DTMF_MODE() (the call's DTMF mode) and PJSIP_SEND_SESSION_REFRESH([invite|update]) (a fresh
// offer sent now). What they change lives in the call's SDP side (call-media.ts); the offers go
// through the call's own offer machinery (call-offers.ts), glare and refusals included. Values are
// the dialplan's, hostile: a codec list is bounded and only names Patchbay carries are kept.
import type { Channel } from '../../core/channels/channel.ts';
import type { TechnologyFunction, TechnologyFunctionCall } from '../../core/channels/technology.ts';
import { InvalidError } from '../../core/errors.ts';
import { isSdpCodec, SDP_CODECS, type SdpCodec } from '../../sip/sdp/offer-answer.ts';
import { SipCall } from './call.ts';
import type { DtmfMode } from './config/types.ts';

const DOCS_SECTION = 'PJSIP sessions';
/** Most items of a codec list taken from the dialplan. */
const MAX_CODEC_ITEMS = 64;
const DTMF_MODES: readonly DtmfMode[] = ['rfc4733', 'inband', 'info', 'auto', 'auto_info'];

/** The PJSIP call of the function's channel; Asterisk's refusal for another technology. */
function sipCallOf(call: TechnologyFunctionCall, name: string): { channel: Channel; sip: SipCall } {
  const channel = call.channel;
  if (!channel) throw new InvalidError(`No channel was provided to ${name} function.`);
  if (!(channel.driver instanceof SipCall)) throw new InvalidError(`Cannot call ${name} on a non-PJSIP channel`);
  return { channel, sip: channel.driver };
}

/**
 * A codec list as Asterisk's allow applies it to an empty set (`ulaw,alaw`, `all`, `!g722`), keeping
 * the codecs Patchbay carries in the order given; names it does not carry are skipped (Asterisk
 * warns of unknown ones and goes on).
 */
export function codecList(value: string): SdpCodec[] {
  const chosen: SdpCodec[] = [];
  for (const raw of value.split(/[,|]/).slice(0, MAX_CODEC_ITEMS)) {
    const item = raw.trim().toLowerCase();
    const removing = item.startsWith('!');
    const name = removing ? item.slice(1) : item;
    const named: SdpCodec[] = name === 'all' ? (Object.keys(SDP_CODECS) as SdpCodec[]) : isSdpCodec(name) ? [name] : [];
    for (const codec of named) {
      const at = chosen.indexOf(codec);
      if (removing && at >= 0) chosen.splice(at, 1);
      else if (!removing && at < 0) chosen.push(codec);
    }
  }
  return chosen;
}

export const sessionFunctions: readonly TechnologyFunction[] = [
  {
    name: 'PJSIP_MEDIA_OFFER',
    syntax: 'PJSIP_MEDIA_OFFER(audio|video)',
    summary:
      'The audio codecs of the channel\'s next offer, comma-separated; written (`ulaw,alaw`, `all`, `!g722`; those the endpoint allows), they replace them: an outgoing channel\'s INVITE when set in a Dial b() pre-dial handler, else the next re-INVITE or UPDATE (PJSIP_SEND_SESSION_REFRESH). Patchbay carries no video: video reads empty and a write is ignored.',
    docsSection: DOCS_SECTION,
    read(call) {
      const { sip } = sipCallOf(call, 'PJSIP_MEDIA_OFFER');
      return call.args.trim() === 'audio' ? sip.sessionMedia.codecs.join(',') : '';
    },
    write(call, value) {
      const { sip } = sipCallOf(call, 'PJSIP_MEDIA_OFFER');
      if (call.args.trim() !== 'audio') return;
      // Only codecs the endpoint allows: the call's RTP stream was placed and sized for those
      // (opus-placement.ts, the receive rate) when it opened.
      const codecs = codecList(value).filter((codec) => sip.codecs.includes(codec));
      if (codecs.length === 0) throw new InvalidError(`PJSIP_MEDIA_OFFER(audio): none of '${value.slice(0, 64)}' is a codec endpoint ${sip.endpointId} allows`);
      sip.sessionMedia.codecs = codecs;
    },
  },
  {
    name: 'PJSIP_DTMF_MODE',
    syntax: 'PJSIP_DTMF_MODE()',
    summary:
      'The channel\'s DTMF mode (rfc4733, inband, info, auto, auto_info); written, digits go that way from now on, and an answered call sends a re-INVITE whose SDP says it (telephone-event or not), as Asterisk.',
    docsSection: DOCS_SECTION,
    read: (call) => sipCallOf(call, 'PJSIP_DTMF_MODE').sip.sessionMedia.dtmfMode,
    write(call, value) {
      const { channel, sip } = sipCallOf(call, 'PJSIP_DTMF_MODE');
      const mode = DTMF_MODES.find((candidate) => candidate === value.trim().toLowerCase());
      if (!mode) throw new InvalidError(`Cannot set DTMF mode to '${value.slice(0, 32)}' on channel '${channel.name}' as value is invalid.`);
      if (sip.sessionMedia.dtmfMode === mode) return;
      sip.sessionMedia.dtmfMode = mode;
      // After the offer/answer, Asterisk refreshes the session so that the SDP says the new mode.
      sip.refreshSession('INVITE');
    },
  },
  {
    name: 'PJSIP_SEND_SESSION_REFRESH',
    syntax: 'PJSIP_SEND_SESSION_REFRESH([invite|update])',
    summary: 'Write-only, on an answered channel: sends a fresh offer now in a re-INVITE (`invite`, the default) or an UPDATE (`update`), with the codecs PJSIP_MEDIA_OFFER set.',
    docsSection: DOCS_SECTION,
    write(call, value) {
      const channel = call.channel;
      if (!channel) throw new InvalidError('No channel was provided to PJSIP_SEND_SESSION_REFRESH function.');
      if (channel.state !== 'Up') throw new InvalidError(`'PJSIP_SEND_SESSION_REFRESH' not allowed on unanswered channel '${channel.name}'.`);
      const { sip } = sipCallOf(call, 'PJSIP_SEND_SESSION_REFRESH');
      // Anything but `update` is a re-INVITE, as in Asterisk.
      const method = value.trim() === 'update' ? 'UPDATE' : 'INVITE';
      if (!sip.refreshSession(method)) throw new InvalidError(`PJSIP_SEND_SESSION_REFRESH: channel '${channel.name}' has no confirmed dialog to refresh`);
    },
  },
];
