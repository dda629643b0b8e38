// Every res_pjsip object type and option Patchbay reads, declared once: Asterisk's name and default,
// how the value is parsed, whether a repeated key adds (list) or replaces, whether Patchbay acts on
// it (`implemented: false` = parsed, validated, and named in a start-up warning when set), and its
// line in docs/sip.md. pjsip.conf, the YAML `config_objects` and ARI's dynamic configuration all
// go through these (build.ts, store-types.ts); docs/sip.md's option table is generated from them.
import { isSdpCodec, type SdpCodec } from '../../../sip/sdp/offer-answer.ts';
import { DEFAULT_ANSWER_PREFERENCE, DEFAULT_OFFER_PREFERENCE } from '../../../sip/sdp/codec-preference.ts';
import { parseCodecPrefs } from './session-values.ts';
import { ACL, ENDPOINT_ACL_OPTIONS, NO_ACL, SYSTEM } from './acl-system-options.ts';
import { TRANSPORT } from './transport-options.ts';
import { CHANNEL_DEFAULTS, CHANNEL_ENDPOINT_OPTIONS } from './channel-options.ts';
import { preferredCodecOnlyConflict, RTP_DEFAULTS, RTP_ENDPOINT_OPTIONS } from './rtp-options.ts';
import { MEDIA_DEFAULTS, MEDIA_ENDPOINT_OPTIONS } from './media-options.ts';
import { applyWebRtc, WEBRTC_DEFAULTS, WEBRTC_ENDPOINT_OPTIONS, webRtcWarnings } from './webrtc-options.ts';
import type {
  DtmfMode,
  IdentifierMethod,
  IdentifyBy,
  PjsipAor,
  PjsipAuth,
  PjsipDomainAlias,
  PjsipEndpoint,
  PjsipGlobal,
  PjsipIdentify,
  PjsipObject,
  PjsipRegistration,
} from './types.ts';
import { getToneZone, toneZoneCountries } from '../../../media/tonezones.ts';
import { NO_GROUPS, parseGroupNames, parseGroupNumbers, type CallGroups } from '../../../core/channels/call-groups.ts';
import { parsePresentation, PRES_ALLOWED_NOT_SCREENED } from '../../../core/channels/presentation.ts';
import {
  MAX_LIST_ITEMS,
  bool,
  choice,
  choices,
  custom,
  declareObject,
  int,
  listOf,
  names,
  optional,
  optionalText,
  parsed,
  text,
  type Draft,
  type ObjectType,
} from './options.ts';
import {
  parseAddress,
  parseBool,
  parseCallerId,
  parseDecimal,
  parseIdentifyMatch,
  parseSipUri,
  shown,
  splitList,
  type Parsed,
} from './values.ts';

/** Codec names Asterisk knows; those Patchbay cannot carry are warned about, others are errors. */
const ASTERISK_CODECS = new Set(
  (
    'ulaw alaw gsm g726 g726aal2 adpcm slin slin12 slin16 slin24 slin32 slin44 slin48 slin96 slin192 lpc10 g729 speex speex16 ' +
    'speex32 ilbc g722 siren7 siren14 testlaw g719 opus jpeg png h261 h263 h263p h264 h265 mpeg4 vp8 vp9 red t140 t38 silk silk8 ' +
    'silk12 silk16 silk24 codec2'
  ).split(' '),
);
const SUPPORTED_CODECS: readonly SdpCodec[] = ['ulaw', 'alaw', 'g722', 'opus'];

const DTMF_MODES: readonly DtmfMode[] = ['rfc4733', 'inband', 'info', 'auto', 'auto_info'];
const IDENTIFY_BY: readonly IdentifyBy[] = ['username', 'auth_username', 'ip', 'header', 'request_uri'];
const IDENTIFIERS: readonly IdentifierMethod[] = ['ip', 'username', 'anonymous', 'header', 'auth_username', 'request_uri'];

// ---- endpoint ---------------------------------------------------------------------------------

type EndpointDraft = Draft<PjsipEndpoint> & {
  /** Whether allow/disallow appeared at all (no codecs by omission is worth a warning). */
  codecsGiven?: boolean;
};

/** allow/disallow as Asterisk applies them: in order, `all` meaning every codec, `!x` in allow = disallow. */
const codecs = (allow: boolean, doc: string) =>
  custom<EndpointDraft>({ list: true, doc }, (draft, value, report) => {
    let list = [...draft.codecs];
    draft.codecsGiven = true;
    for (let item of splitList(value.toLowerCase())) {
      let adding = allow;
      if (item.startsWith('!')) {
        adding = !adding;
        item = item.slice(1).trim();
      }
      // `ulaw:30`: the codec with its framing (ms per packet), as Asterisk's allow reads it.
      const framed = /^([a-z0-9]+):(\d{1,4})$/.exec(item);
      if (framed) {
        item = framed[1];
        if (adding && Number(framed[2]) !== 20 && (isSdpCodec(item) || item === 'all')) {
          report.warn(`allow=${framed[0]}: a framing of ${framed[2]} ms is not implemented (Patchbay sends 20 ms packets and asks a=ptime:20); ${item} is allowed`);
        }
      }
      if (item === 'all') {
        list = adding ? [...list, ...SUPPORTED_CODECS.filter((codec) => !list.includes(codec))] : [];
      } else if (isSdpCodec(item)) {
        list = list.filter((codec) => codec !== item);
        if (adding) list.push(item);
      } else if (ASTERISK_CODECS.has(item)) {
        if (adding) report.warn(`codec ${item} is not supported by Patchbay (only ${SUPPORTED_CODECS.join(', ')}); ignored`);
      } else {
        report.fail(`unknown codec ${shown(item)}`);
      }
    }
    draft.codecs = list;
  });

const sipUri = <K extends string>(key: K, doc: string, implemented = true) => optional(key, parseSipUri, { doc, implemented });

/**
 * call_group, pickup_group, named_call_group, named_pickup_group: one of the endpoint's groups, as
 * chan_pjsip reads them (ast_get_group, ast_get_namedgroups); a piece Asterisk would skip is a warning.
 */
const group = (field: keyof CallGroups, doc: string) =>
  custom<EndpointDraft>({ doc }, (draft, value, report) => {
    const problems: string[] = [];
    const groups = { ...(draft.groups ?? NO_GROUPS) };
    if (field === 'callGroup' || field === 'pickupGroup') groups[field] = parseGroupNumbers(value, problems);
    else groups[field] = parseGroupNames(value, problems);
    for (const problem of problems) report.warn(problem);
    draft.groups = groups;
  });

/** Longest mailbox name (`1000@default`); ARI's mailbox names are free text, bounded the same way. */
const MAX_MAILBOX_NAME = 255;

/** `mailboxes=`: comma-separated mailbox names, replacing the previous list (as Asterisk reads the string). */
const mailboxList = (doc: string) =>
  parsed('mailboxes', (value): Parsed<readonly string[]> => {
    const list = splitList(value).slice(0, MAX_LIST_ITEMS);
    // eslint-disable-next-line no-control-regex
    const bad = list.find((name) => name.length > MAX_MAILBOX_NAME || /[\x00-\x1f\x7f]/.test(name));
    return bad === undefined ? { ok: true, value: [...new Set(list)] } : { ok: false, error: `${shown(bad)} is not a mailbox name (1 to ${MAX_MAILBOX_NAME} printable characters)` };
  }, { doc });

export const ENDPOINT = declareObject<PjsipEndpoint, EndpointDraft>({
  type: 'endpoint',
  initial: (id) => ({
    type: 'endpoint',
    id,
    context: 'default',
    codecs: [],
    auth: [],
    outboundAuth: [],
    aors: [],
    acls: NO_ACL,
    dtmfMode: 'rfc4733',
    directMedia: false,
    directMediaMethod: 'invite',
    directMediaGlareMitigation: 'none',
    disableDirectMediaOnNat: false,
    identifyBy: ['username', 'ip'],
    rtpSymmetric: false,
    inbandProgress: false,
    followEarlyMediaFork: true,
    acceptMultipleSdpAnswers: false,
    ignore183WithoutSdp: false,
    forceRport: true,
    rewriteContact: false,
    allowOverlap: true,
    rtpTimeout: 0,
    rtcpMux: false,
    mediaEncryption: 'no',
    mediaEncryptionOptimistic: false,
    srtpTag32: false,
    allowUnauthenticatedOptions: false,
    sendPai: false,
    sendRpid: false,
    sendDiversion: true,
    sendHistoryInfo: false,
    trustIdInbound: false,
    trustIdOutbound: false,
    callerIdPrivacy: PRES_ALLOWED_NOT_SCREENED,
    sendConnectedLine: true,
    connectedLineMethod: 'invite',
    trustConnectedLine: true,
    rpidImmediate: false,
    mohPassthrough: false,
    redirectMethod: 'user',
    suppressQ850ReasonHeaders: false,
    rel100: 'yes',
    timers: 'yes',
    timersMinSe: 90,
    timersSessExpires: 1800,
    incomingCallOfferPref: 'remote',
    outgoingCallOfferPref: 'remote_merge',
    allowSubscribe: true,
    subMinExpiry: 0,
    mailboxes: [],
    mwiSubscribeReplacesUnsolicited: false,
    aggregateMwi: true,
    notifyEarlyInuseRinging: false,
    ...WEBRTC_DEFAULTS,
    ...RTP_DEFAULTS,
    ...CHANNEL_DEFAULTS,
    ...MEDIA_DEFAULTS,
  }),
  options: {
    context: text('context', { default: 'default', doc: 'Dialplan context of inbound calls.' }),
    message_context: optionalText('messageContext', { doc: 'Dialplan context of out-of-call MESSAGEs (else `context`).' }),
    disallow: codecs(false, 'Codecs removed, in order with `allow` (`all` = every codec).'),
    allow: codecs(true, 'Codecs offered and accepted, in order; `ulaw`, `alaw`, `g722` and `opus` are carried (others are a warning).'),
    aors: names('aors', { doc: 'AORs whose contacts are called and where the endpoint may register.' }),
    auth: names('auth', { doc: 'Inbound digest authentication (MD5, SHA-256).' }),
    outbound_auth: names('outboundAuth', {
      doc: 'Credentials for 401/407 challenges to requests Patchbay sends: INVITEs are retried once per realm (registrations use the registration\'s own).',
    }),
    transport: optionalText('transport', { doc: 'The transport whose socket (and protocol, unless the contact names one) sends requests to the endpoint.' }),
    direct_media: bool('directMedia', {
      default: 'no',
      doc: 'In a two-party bridge with another such endpoint and nothing of the server on the media, each far end is re-INVITEd to send its RTP straight to the other (docs/sip.md, Direct media); Asterisk\'s default is `yes`.',
    }),
    direct_media_method: choice('directMediaMethod', ['invite', 'reinvite', 'update'], {
      default: 'invite',
      doc: 'How direct media is offered and taken back: `invite` (or `reinvite`) a re-INVITE, `update` an UPDATE with SDP.',
    }),
    direct_media_glare_mitigation: choice('directMediaGlareMitigation', ['none', 'outgoing', 'incoming'], {
      default: 'none',
      doc: 'The first direct-media offer is not sent on the endpoint\'s calls of this direction (`outgoing`: calls the server placed; `incoming`: calls it received): the other leg\'s alone moves the media, so the two far ends do not re-INVITE each other across.',
    }),
    disable_direct_media_on_nat: bool('disableDirectMediaOnNat', {
      default: 'no',
      doc: 'No direct media while the far end is behind NAT: with `force_rport` or `rtp_symmetric`, its signalling comes from another address than its SDP names.',
    }),
    // The dialplan transfer's NOTIFYs follow the transferee (channels/pjsip/refer-progress.ts), which is `yes`.
    refer_blind_progress: custom<EndpointDraft>({ default: 'yes', doc: 'Always `yes` in effect: a blind transfer\'s NOTIFYs follow the transferee (`no`, 200 at once, is a warning).' }, (_draft, value, report) => {
      const result = parseBool(value);
      if (!result.ok) return report.fail(result.error);
      if (!result.value) report.warn('refer_blind_progress=no is not implemented by Patchbay: a blind transfer\'s NOTIFYs follow the transferee');
    }),
    callerid: custom<EndpointDraft>({ doc: 'Caller id of calls from the endpoint (`"Name" <number>`).' }, (draft, value, report) => {
      const result = parseCallerId(value);
      if (!result.ok) return report.fail(result.error);
      if (result.value.name === undefined && result.value.number === undefined) delete draft.callerId;
      else draft.callerId = result.value;
    }),
    // res_pjsip: the presentation of the endpoint's own id, name and number alike (a name or a number).
    callerid_privacy: custom<EndpointDraft>({ default: 'allowed_not_screened', doc: 'Presentation of calls from the endpoint whose id is not taken from a trusted P-Asserted-Identity / Remote-Party-ID: `allowed_not_screened` ... `prohib`, `unavailable`, or its number; a restricted caller is sent on as Anonymous.' }, (draft, value, report) => {
      const presentation = parsePresentation(value);
      if (presentation === undefined) return report.fail(`${shown(value)} is not a presentation (allowed_not_screened, allowed_passed_screen, allowed_failed_screen, allowed, prohib_not_screened, prohib_passed_screen, prohib_failed_screen, prohib, unavailable or a number)`);
      draft.callerIdPrivacy = presentation;
    }),
    dtmf_mode: choice('dtmfMode', DTMF_MODES, { default: 'rfc4733', doc: 'How DTMF is sent and received.' }),
    identify_by: choices('identifyBy', IDENTIFY_BY, { default: 'username,ip', doc: 'Whether the From user (`username`, `auth_username`) may identify the endpoint.' }),
    language: optionalText('language', { doc: 'Language of the endpoint\'s channels (sound prompts).' }),
    tone_zone: custom<EndpointDraft>({ doc: `Tone zone of the endpoint's channels (a country of indications.conf, else of the built-in ${toneZoneCountries().join(', ')}): the tones indications are heard in band with.` }, (draft, value, report) => {
      const zone = getToneZone(value.trim());
      // As chan_pjsip, an unknown country leaves the channels in the default zone (it is only named).
      if (!zone && value.trim() !== '') report.warn(`tone_zone ${shown(value)} is not a known tone zone (${toneZoneCountries().join(', ')}): the default applies`);
      if (zone) draft.toneZone = zone.country;
      else delete draft.toneZone;
    }),
    inband_progress: bool('inbandProgress', { default: 'no', doc: 'Ringing before the answer is sent as 183 Session Progress with SDP and the ring tone is heard in band, instead of a 180.' }),
    follow_early_media_fork: bool('followEarlyMediaFork', {
      default: 'yes',
      doc: 'On calls to the endpoint, an SDP answer from another fork (another To tag) after the early media\'s moves the media to it: a later 18x (when the system section\'s `follow_early_media_fork` is yes too) or the 2xx. `no`: the media stays where the first early answer put it, also when another fork answers (see *Forked answers*).',
    }),
    accept_multiple_sdp_answers: bool('acceptMultipleSdpAnswers', {
      default: 'no',
      doc: 'On calls to the endpoint, a later SDP in an 18x or the 2xx of the early dialog whose unreliable (no 100rel) 18x set the media is applied, when the system section\'s `accept_multiple_sdp_answers` is yes too; `no`: ignored (see *Forked answers*).',
    }),
    ignore_183_without_sdp: bool('ignore183WithoutSdp', { default: 'no', doc: 'A 183 Session Progress without SDP to a call to the endpoint is not passed on as progress (chan_pjsip).' }),
    from_user: optionalText('fromUser', { doc: 'User part of the From of calls to the endpoint.' }),
    from_domain: optionalText('fromDomain', { doc: 'Host part of the From of calls to the endpoint.' }),
    rtp_symmetric: bool('rtpSymmetric', { default: 'no', doc: 'Send RTP (and RTCP) to where the far end\'s comes from once learned; no: to the SDP\'s address.' }),
    force_rport: bool('forceRport', { default: 'yes', doc: 'Answer to the source port whatever Via says; no: to the Via\'s port unless it asks for rport.' }),
    rewrite_contact: bool('rewriteContact', { default: 'no', doc: 'Take the Contact of registrations and calls as their source address, port and transport.' }),
    allow_overlap: bool('allowOverlap', { default: 'yes', doc: 'An INVITE to a number that could still match an extension after more digits is answered 484 Address Incomplete (no: 404).' }),
    media_address: optional('mediaAddress', parseAddress, { doc: 'Address written in the endpoint\'s SDP (c=, o=) instead of the transport\'s; towards a destination outside `local_net` a transport\'s `external_media_address` still replaces it when it is inside a local network, and everywhere when no `local_net` is set.' }),
    rtp_timeout: int('rtpTimeout', 0, 86_400, { default: '0', doc: 'Hang up an answered call after this many seconds without RTP from the far end while it does not hold the call (cause 44).' }),
    rtcp_mux: bool('rtcpMux', { default: 'no', doc: 'RTCP on the RTP port (RFC 5761) when the far end offers it.' }),
    media_encryption: custom<EndpointDraft>(
      { default: 'no', doc: '`sdes`: SRTP keyed by a=crypto (RFC 4568) on RTP/SAVP, plain RTP/AVP offers refused (488); `dtls`: DTLS-SRTP (RFC 5763/5764, WebRTC: with ice_support, see docs/webrtc.md); `no`: RTP/SAVP offers refused (488).' },
      (draft, value, report) => {
        const word = value.trim().toLowerCase();
        if (word !== 'no' && word !== 'sdes' && word !== 'dtls') return report.fail(`${shown(value)} is not one of no, sdes, dtls`);
        draft.mediaEncryption = word;
      },
    ),
    media_encryption_optimistic: bool('mediaEncryptionOptimistic', {
      default: 'no',
      doc: 'With media_encryption=sdes: offer RTP/AVP with a=crypto, use SRTP when the far end answers with a key, plain RTP otherwise; plain offers are accepted.',
    }),
    srtp_tag_32: bool('srtpTag32', { default: 'no', doc: 'Offer AES_CM_128_HMAC_SHA1_32 before AES_CM_128_HMAC_SHA1_80.' }),
    outbound_proxy: sipUri('outboundProxy', 'Proxy the INVITEs to the endpoint are sent through (named in a Route header).', true),
    allow_unauthenticated_options: bool('allowUnauthenticatedOptions', { default: 'no', doc: 'Answer this endpoint\'s OPTIONS outside a dialog without a challenge; no: an endpoint with an `auth` is challenged (401) like for any other request.' }),
    send_pai: bool('sendPai', { default: 'no', doc: 'Send P-Asserted-Identity.' }),
    send_rpid: bool('sendRpid', { default: 'no', doc: 'Send Remote-Party-ID.' }),
    send_diversion: bool('sendDiversion', { default: 'yes', doc: 'Send a Diversion header (RFC 5806) with the redirecting party of a channel that was redirected (REDIRECTING(count) above 0) on its INVITE.' }),
    send_history_info: bool('sendHistoryInfo', { default: 'no', doc: 'Send History-Info headers (RFC 7044) with the redirecting party on the INVITE: the original target (index 1), and the redirected-to party (index 1.1, with its cause) when it has a number.' }),
    trust_id_inbound: bool('trustIdInbound', { default: 'no', doc: 'Take the caller id from P-Asserted-Identity / Remote-Party-ID.' }),
    trust_id_outbound: bool('trustIdOutbound', { default: 'no', doc: 'Send a restricted caller\'s id in P-Asserted-Identity (with `Privacy: id`) / Remote-Party-ID (`privacy=full`) as send_pai / send_rpid ask; its From is Anonymous either way. no: only an allowed id is sent.' }),
    send_connected_line: bool('sendConnectedLine', {
      default: 'yes',
      doc: 'Tell the endpoint whom it talks to once that changes (a Dial() answer, a bridge, a transfer): a re-INVITE or UPDATE with P-Asserted-Identity / Remote-Party-ID (only with `send_pai` or `send_rpid`, for a party with a number); `no` also leaves them out of the responses after the first provisional.',
    }),
    connected_line_method: choice('connectedLineMethod', ['invite', 'reinvite', 'update'], {
      default: 'invite',
      doc: 'How the connected-line update goes: `invite` (or `reinvite`) a re-INVITE with our SDP, `update` an UPDATE without SDP; as Asterisk, an UPDATE whenever the endpoint\'s Allow lists UPDATE.',
    }),
    trust_connected_line: bool('trustConnectedLine', {
      default: 'yes',
      doc: 'With `trust_id_inbound`: a P-Asserted-Identity / Remote-Party-ID in the endpoint\'s re-INVITE, UPDATE or responses to our INVITE becomes its channel\'s caller id and the other party\'s connected line.',
    }),
    rpid_immediate: bool('rpidImmediate', {
      default: 'no',
      doc: 'Before the answer, a connected-line update goes at once as a 180 (183 with `inband_progress`, or once ringing) carrying the identity headers.',
    }),
    moh_passthrough: bool('mohPassthrough', { default: 'no', doc: 'Hold from the other party re-INVITEs the endpoint (sendonly, then sendrecv) instead of playing it music on hold.' }),
    redirect_method: choice('redirectMethod', ['user', 'uri_core', 'uri_pjsip'], {
      default: 'user',
      doc: "A 3xx to a call's INVITE: `user` ends the call forwarded to the Contact's user (Dial() calls `Local/<user>@<FORWARD_CONTEXT or context>`), `uri_core` to `PJSIP/<endpoint>/<Contact URI>`; `uri_pjsip` sends the INVITE to the Contact on the same channel (by q, each URI once, at most 5 redirects).",
    }),
    suppress_q850_reason_headers: bool('suppressQ850ReasonHeaders', { default: 'no', doc: 'No `Reason: Q.850;cause=N` header on the BYE, CANCEL and refusals sent to the endpoint.' }),
    '100rel': choice('rel100', ['no', 'yes', 'required', 'peer_supported'], {
      default: 'yes',
      doc: 'Reliable provisional responses (RFC 3262): `yes` sends 1xx reliably when the caller requires it and PRACKs reliable 1xx; `peer_supported` also when it only supports it; `required` insists (421); `no` refuses (420).',
    }),
    timers: choice('timers', ['no', 'yes', 'required', 'always', 'forced'], {
      default: 'yes',
      doc: 'Session timers (RFC 4028): `yes` when the far end asks (and asked for in INVITEs), `required` (421 without support), `always`/`forced` even unasked; refreshed by re-INVITE or UPDATE, an expired session ends with BYE.',
    }),
    timers_min_se: int('timersMinSe', 90, 86_400, { default: '90', doc: 'Smallest session interval accepted (seconds); less gets 422 with Min-SE.' }),
    timers_sess_expires: int('timersSessExpires', 90, 86_400, { default: '1800', doc: 'Session interval asked for, and the largest granted (seconds).' }),
    incoming_call_offer_pref: choice('incomingCallOfferPref', ['local', 'local_first', 'remote', 'remote_first'], {
      default: 'remote',
      doc: "Codec order of the answer to an incoming offer: the offer's (`remote`) or `allow`'s (`local`); `_first` keeps one. Patchbay's default is `remote` (Asterisk's is `local`).",
    }),
    outgoing_call_offer_pref: choice('outgoingCallOfferPref', ['local', 'local_merge', 'local_first', 'remote', 'remote_merge', 'remote_first'], {
      default: 'remote_merge',
      doc: "Codec order of an outgoing offer: the calling side's codecs (`remote`) or `allow`'s (`local`); `_merge` offers all allowed codecs, `_first` one.",
    }),
    codec_prefs_incoming_offer: custom<EndpointDraft>(
      { doc: "Asterisk 18+'s form of incoming_call_offer_pref (`prefer: pending` or `configured`, `keep: all` or `first`); wins over it when set." },
      (draft, value, report) => {
        const result = parseCodecPrefs(value, DEFAULT_ANSWER_PREFERENCE, false);
        if (result.ok) draft.codecPrefsIncomingOffer = result.value;
        else report.fail(result.error);
      },
    ),
    codec_prefs_outgoing_offer: custom<EndpointDraft>(
      { doc: "Asterisk 18+'s form of outgoing_call_offer_pref (`prefer`, `operation: union` or `intersect`, `keep`); wins over it when set." },
      (draft, value, report) => {
        const result = parseCodecPrefs(value, DEFAULT_OFFER_PREFERENCE, true);
        if (result.ok) draft.codecPrefsOutgoingOffer = result.value;
        else report.fail(result.error);
      },
    ),
    allow_subscribe: bool('allowSubscribe', { default: 'yes', doc: 'Serve SUBSCRIBE from the endpoint (`dialog`, `presence`, `message-summary`); no: 603.' }),
    subscribe_context: optionalText('subscribeContext', { doc: 'Context whose hints `dialog` and `presence` subscriptions watch (else `context`).' }),
    sub_min_expiry: int('subMinExpiry', 0, 86_400, { default: '0', doc: 'Shortest subscription accepted (seconds); less gets 423 with Min-Expires.' }),
    mailboxes: mailboxList('Mailboxes whose counts are sent to the endpoint\'s contacts as unsolicited MWI NOTIFYs when they change and when a contact registers.'),
    mwi_subscribe_replaces_unsolicited: bool('mwiSubscribeReplacesUnsolicited', {
      default: 'no',
      doc: 'A `message-summary` SUBSCRIBE for a mailbox of `mailboxes` replaces its unsolicited NOTIFYs; no: such a SUBSCRIBE is refused (500).',
    }),
    voicemail_extension: optionalText('voicemailExtension', { doc: 'User of the Message-Account URI in unsolicited MWI.' }),
    aggregate_mwi: bool('aggregateMwi', { default: 'yes', doc: 'One unsolicited MWI NOTIFY with the sum of all `mailboxes`; no: one per mailbox.' }),
    mwi_from_user: optionalText('mwiFromUser', { doc: 'From user of unsolicited MWI NOTIFYs.' }),
    incoming_mwi_mailbox: custom<EndpointDraft>(
      { doc: 'Mailbox (`mailbox@context`) whose counts an unsolicited MWI NOTIFY from the endpoint (an external voicemail\'s `application/simple-message-summary`) sets, as ARI\'s `PUT /mailboxes` does: answered 200; 404 without this option, without an `@` in it, or with a body without `Voice-Message`.' },
      (draft, value, report) => {
        const name = value.trim();
        // eslint-disable-next-line no-control-regex
        if (name.length > MAX_MAILBOX_NAME || /[\x00-\x1f\x7f]/.test(name)) return report.fail(`${shown(value)} is not a mailbox name (at most ${MAX_MAILBOX_NAME} printable characters)`);
        if (name === '') return void delete draft.incomingMwiMailbox;
        if (!name.includes('@')) report.warn(`incoming_mwi_mailbox ${shown(name)} has no @context: the endpoint's MWI NOTIFYs are answered 404, as Asterisk answers them`);
        draft.incomingMwiMailbox = name;
      },
    ),
    notify_early_inuse_ringing: bool('notifyEarlyInuseRinging', { default: 'no', doc: 'dialog-info shows an extension ringing while in use as early (ringing); no: confirmed.' }),
    call_group: group('callGroup', 'Call groups of the endpoint\'s channels (numbers 0-63, ranges: `1,3-5`): a channel ringing it may be picked up by a channel whose pickup group shares one (docs/dialplan.md, Call pickup).'),
    pickup_group: group('pickupGroup', 'Pickup groups of the endpoint\'s channels (numbers 0-63, ranges): the ringing channels whose call group shares one may be picked up from it (`Pickup()`, the pickup extension).'),
    named_call_group: group('namedCallGroups', 'Named call groups of the endpoint\'s channels (comma-separated names), matched against named pickup groups.'),
    named_pickup_group: group('namedPickupGroups', 'Named pickup groups of the endpoint\'s channels (comma-separated names), matched against named call groups.'),
    ...ENDPOINT_ACL_OPTIONS,
    ...CHANNEL_ENDPOINT_OPTIONS,
    ...RTP_ENDPOINT_OPTIONS,
    ...MEDIA_ENDPOINT_OPTIONS,
    // Asterisk registers the WebRTC fields after the others, so they come last in ARI's dynamic configuration too.
    ...WEBRTC_ENDPOINT_OPTIONS,
  },
  finish(draft, report) {
    const { codecsGiven, ...endpoint } = draft;
    if (!codecsGiven) report.warn('no allow= given: the endpoint has no codecs and cannot carry calls');
    else if (endpoint.codecs.length === 0) report.warn(`allow= leaves no codec Patchbay supports (${SUPPORTED_CODECS.join(', ')}): calls cannot be set up`);
    if (endpoint.context === '') report.error('context', 'must not be empty');
    const codecConflict = preferredCodecOnlyConflict(endpoint);
    if (codecConflict) report.error('preferred_codec_only', codecConflict);
    if (endpoint.timersSessExpires < endpoint.timersMinSe) report.error('timers_sess_expires', `${endpoint.timersSessExpires} is below timers_min_se ${endpoint.timersMinSe}`);
    const webrtc = applyWebRtc(endpoint);
    for (const warning of webRtcWarnings(webrtc)) report.warn(warning);
    return webrtc;
  },
});

// ---- aor --------------------------------------------------------------------------------------

const expiration = <K extends string>(key: K, fallback: string, doc: string) => int(key, 1, 2_147_483_647, { default: fallback, doc });

export const AOR = declareObject<PjsipAor, Draft<PjsipAor>>({
  type: 'aor',
  initial: (id) => ({
    type: 'aor',
    id,
    maxContacts: 0,
    removeExisting: false,
    contacts: [],
    qualifyFrequency: 0,
    qualifyTimeout: 3,
    defaultExpiration: 3600,
    minimumExpiration: 60,
    maximumExpiration: 7200,
    mailboxes: [],
    removeUnavailable: false,
    qualify2xxOnly: false,
    authenticateQualify: false,
    supportPath: false,
  }),
  options: {
    max_contacts: int('maxContacts', 0, 1000, { default: '0', doc: 'Most registered contacts (0: no limit).' }),
    remove_existing: bool('removeExisting', { default: 'no', doc: 'A registration beyond max_contacts replaces the oldest.' }),
    contact: listOf('contacts', parseSipUri, { doc: 'Static contacts, called in order.' }),
    qualify_frequency: int('qualifyFrequency', 0, 86_400, { default: '0', doc: 'Seconds between OPTIONS to each contact (0: none).' }),
    qualify_timeout: parsed('qualifyTimeout', (value) => parseDecimal(value, 0, 3600), { default: '3.000000', doc: 'Seconds an OPTIONS may take.' }),
    default_expiration: expiration('defaultExpiration', '3600', 'Registration lifetime when the phone asks none.'),
    minimum_expiration: expiration('minimumExpiration', '60', 'Shortest registration accepted (423 below).'),
    maximum_expiration: expiration('maximumExpiration', '7200', 'Longest registration granted.'),
    outbound_proxy: sipUri('outboundProxy', 'Proxy requests to the contacts are sent through.', false),
    mailboxes: mailboxList('Mailboxes a `message-summary` SUBSCRIBE to the AOR (its name, or its voicemail_extension, as the request\'s user) reports.'),
    voicemail_extension: optionalText('voicemailExtension', { doc: 'User of the Message-Account URI of MWI subscriptions to the AOR; a SUBSCRIBE to it finds the AOR.' }),
    remove_unavailable: bool('removeUnavailable', { default: 'no', doc: 'A registration beyond max_contacts first replaces contacts whose qualify failed (Unavailable), the soonest to expire first; without remove_existing it is refused (403) only when those do not make room.' }),
    qualify_2xx_only: bool('qualify2xxOnly', { default: 'no', doc: 'Only a 2xx answer to the qualify OPTIONS makes the contact Reachable; any other final answer makes it Unreachable.' }),
    authenticate_qualify: bool('authenticateQualify', { default: 'no', doc: 'Accepted with no effect, as in Asterisk 22: a 401/407 to a qualify OPTIONS is always answered once with the outbound_auth of the first endpoint naming the AOR, and the answer to that counts.' }),
    support_path: bool('supportPath', { default: 'no', doc: 'RFC 3327: the Path of a REGISTER (which must then say `Supported: path`, else 420) is stored with its contacts and echoed in the 200 with `Supported: path`; calls and qualify OPTIONS to such a contact go to the first Path hop, with the Path as Route.' }),
  },
  finish(draft, report) {
    const { minimumExpiration: min, maximumExpiration: max, defaultExpiration: def } = draft;
    if (min > max) report.error('minimum_expiration', `${min} is above maximum_expiration ${max}`);
    else if (def < min || def > max) report.error('default_expiration', `${def} is not between minimum_expiration ${min} and maximum_expiration ${max}`);
    return draft;
  },
});

// ---- auth -------------------------------------------------------------------------------------

export const AUTH = declareObject<PjsipAuth, Draft<PjsipAuth>>({
  type: 'auth',
  initial: (id) => ({ type: 'auth', id, authType: 'userpass', username: '', nonceLifetime: 32 }),
  options: {
    auth_type: choice('authType', ['userpass', 'md5'], { default: 'userpass', doc: '`userpass` or `md5` (with md5_cred).' }),
    username: text('username', { doc: 'User name of the credentials.' }),
    // Not trimmed: spaces may be part of a password.
    password: optional('password', (value) => ({ ok: true, value }), { doc: 'Password (auth_type=userpass).' }),
    md5_cred: optionalText('md5Cred', { doc: 'Hex MD5 of `username:realm:password` (auth_type=md5).' }),
    realm: optionalText('realm', { doc: 'Realm of the credentials when registering out (inbound challenges use global `default_realm`).' }),
    nonce_lifetime: int('nonceLifetime', 1, 86_400, { default: '32', doc: 'Seconds a challenge\'s nonce stays valid for these credentials: an older one, even with the right password, is answered 401 with a new challenge marked stale=true.' }),
  },
  finish(draft, report) {
    if (draft.username === '') report.error('username', 'is required');
    if (draft.authType === 'md5') {
      const cred = draft.md5Cred;
      if (cred === undefined || !/^[0-9a-fA-F]{32}$/.test(cred)) {
        report.error('md5_cred', 'auth_type=md5 needs md5_cred, 32 hexadecimal digits (MD5 of username:realm:password)');
      } else {
        draft.md5Cred = cred.toLowerCase();
      }
      if (draft.password !== undefined && draft.password !== '') report.warn('password is ignored with auth_type=md5');
      delete draft.password;
    } else {
      if (draft.md5Cred !== undefined) report.warn('md5_cred is ignored with auth_type=userpass');
      delete draft.md5Cred;
      draft.password ??= '';
    }
    return draft;
  },
});

// ---- identify ---------------------------------------------------------------------------------

/** `Name: value` of match_header; the value is compared as written (Asterisk's `/regex/` form is refused). */
function parseMatchHeader(value: string): Parsed<{ name: string; value: string }> {
  const colon = value.indexOf(':');
  const name = colon > 0 ? value.slice(0, colon).trim() : '';
  const wanted = colon > 0 ? value.slice(colon + 1).trim() : '';
  if (!/^[A-Za-z0-9!%*_+`'~.-]{1,64}$/.test(name)) return { ok: false, error: `${shown(value)} is not Header-Name: value` };
  if (/^\/.*\/$/.test(wanted)) return { ok: false, error: `${shown(value)}: a /regular expression/ is not supported by Patchbay` };
  return { ok: true, value: { name, value: wanted } };
}

export const IDENTIFY = declareObject<PjsipIdentify, Draft<PjsipIdentify>>({
  type: 'identify',
  initial: (id) => ({ type: 'identify', id, endpoint: '', match: [], srvLookups: true }),
  options: {
    endpoint: text('endpoint', { doc: 'The endpoint requests that match are from.' }),
    match: listOf('match', parseIdentifyMatch, { doc: 'Source addresses and networks (a host name is a warning: not resolved).' }),
    srv_lookups: bool('srvLookups', { default: 'yes', doc: 'Resolve host names of `match` through SRV records.', implemented: false }),
    match_header: optional('matchHeader', parseMatchHeader, { doc: 'A request with this `Header: value` is from `endpoint`.' }),
  },
  finish(draft, report) {
    if (draft.endpoint === '') report.error('endpoint', 'is required');
    if (draft.match.length === 0 && draft.matchHeader === undefined) report.warn('no match= given: the identify matches nothing');
    for (const item of draft.match) {
      if (item.kind === 'host') report.warn(`match=${item.host}: host names are not resolved by Patchbay (addresses and networks are); this item matches nothing`);
    }
    return draft;
  },
});

// ---- registration -----------------------------------------------------------------------------

/** A header value written as given: printable, one line, bounded (it goes on the wire as is). */
function parseHeaderText(value: string): Parsed<string> {
  const text = value.trim();
  // eslint-disable-next-line no-control-regex
  if (text === '' || text.length > 255 || /[\x00-\x1f\x7f]/.test(text)) return { ok: false, error: `${shown(value)} is not a header value (1 to 255 printable characters)` };
  return { ok: true, value: text };
}

/** contact_header_params: `name[=value]` pairs separated by `;` (a leading `;` dropped), values as tokens or quoted strings. */
function parseContactHeaderParams(value: string): Parsed<string> {
  const text = value.trim().replace(/^;/, '');
  const param = /^[A-Za-z0-9!%*_+`'~.-]+(?:=(?:[A-Za-z0-9!%*_+`'~.:\[\]-]+|"(?:[^"\\\r\n]|\\.)*"))?$/;
  if (text === '' || text.length > 255 || !text.split(';').every((piece) => param.test(piece.trim()))) {
    return { ok: false, error: `${shown(value)} is not a list of header parameters (name or name=value, separated by ;)` };
  }
  return { ok: true, value: text.split(';').map((piece) => piece.trim()).join(';') };
}

const seconds = <K extends string>(key: K, min: number, fallback: string, doc: string) => int(key, min, 2_147_483_647, { default: fallback, doc });

export const REGISTRATION = declareObject<PjsipRegistration, Draft<PjsipRegistration>>({
  type: 'registration',
  initial: (id) => ({
    type: 'registration',
    id,
    serverUri: '',
    clientUri: '',
    outboundAuth: [],
    expiration: 3600,
    retryInterval: 60,
    forbiddenRetryInterval: 0,
    fatalRetryInterval: 0,
    maxRetries: 10,
    authRejectionPermanent: true,
    line: false,
    maxRandomInitialDelay: 10,
    supportPath: false,
  }),
  options: {
    server_uri: parsed('serverUri', parseSipUri, { doc: 'The registrar.' }),
    client_uri: parsed('clientUri', parseSipUri, { doc: 'The address of record registered.' }),
    contact_user: optionalText('contactUser', { doc: 'User part of the Contact registered.' }),
    outbound_auth: names('outboundAuth', { doc: 'Credentials for the registrar\'s challenges.' }),
    transport: optionalText('transport', { doc: 'The transport the REGISTER leaves from (a `tcp` one registers over TCP); its port is in the Contact.' }),
    outbound_proxy: sipUri('outboundProxy', 'Proxy the REGISTER is sent through.'),
    expiration: seconds('expiration', 1, '3600', 'Lifetime asked for (seconds).'),
    retry_interval: seconds('retryInterval', 1, '60', 'Seconds before retrying a failed registration.'),
    forbidden_retry_interval: seconds('forbiddenRetryInterval', 0, '0', 'Seconds before retrying after 403 (0: never).'),
    fatal_retry_interval: seconds('fatalRetryInterval', 0, '0', 'Seconds before retrying after a fatal answer (0: never).'),
    max_retries: int('maxRetries', 0, 2_147_483_647, { default: '10', doc: 'Retries before giving up.' }),
    auth_rejection_permanent: bool('authRejectionPermanent', { default: 'yes', doc: 'Stop after the registrar refuses the credentials.' }),
    line: bool('line', { default: 'no', doc: 'Requests to the registered Contact are from `endpoint`.' }),
    endpoint: optionalText('endpoint', { doc: 'The endpoint of `line=yes`.' }),
    max_random_initial_delay: int('maxRandomInitialDelay', 0, 3600, { default: '10', doc: 'Random delay before the first REGISTER (seconds).' }),
    user_agent: optional('userAgent', parseHeaderText, { doc: 'User-Agent header of this registration\'s REGISTERs (else global `user_agent`).' }),
    contact_header_params: optional('contactHeaderParams', parseContactHeaderParams, { doc: 'Header parameters written after the `>` of the registered Contact (`+sip.instance="<urn:…>";reg-id=1`), as given, without the leading `;`.' }),
    support_path: bool('supportPath', { default: 'no', doc: 'REGISTERs say `Supported: path` (RFC 3327), so that proxies on the way may add a Path.' }),
  },
  finish(draft, report) {
    if (draft.serverUri === '') report.error('server_uri', 'is required');
    if (draft.clientUri === '') report.error('client_uri', 'is required');
    if (draft.line && draft.endpoint === undefined) report.error('endpoint', 'is required with line=yes');
    return draft;
  },
});

// ---- domain_alias, global ---------------------------------------------------------------------

export const DOMAIN_ALIAS = declareObject<PjsipDomainAlias, Draft<PjsipDomainAlias>>({
  type: 'domain_alias',
  initial: (id) => ({ type: 'domain_alias', id, domain: '' }),
  options: {
    domain: text('domain', { doc: 'The domain the section name is an alias of: a request from `user@<section name>` is from the endpoint `user@<domain>` when there is one (else `user`), and a REGISTER to it binds the AOR `user@<domain>`.' }),
  },
  finish(draft, report) {
    if (draft.domain === '') report.error('domain', 'is required');
    return draft;
  },
});

/** The `global` object when pjsip.conf has no such section. */
export function defaultPjsipGlobal(id = 'global'): PjsipGlobal {
  return {
    type: 'global',
    id,
    endpointIdentifierOrder: ['ip', 'username', 'anonymous'],
    defaultRealm: 'asterisk',
    userAgent: 'Patchbay',
    defaultFromUser: 'asterisk',
    maxForwards: 70,
    keepAliveInterval: 90,
    allowSending180After183: false,
    ignoreUriUserOptions: false,
    useCalleridContact: false,
    norefersub: true,
    allCodecsOnEmptyReinvite: false,
    mwiDisableInitialUnsolicited: false,
    unidentifiedRequestCount: 5,
    unidentifiedRequestPeriod: 5,
    unidentifiedRequestPruneInterval: 30,
  };
}

export const GLOBAL = declareObject<PjsipGlobal, Draft<PjsipGlobal>>({
  type: 'global',
  initial: defaultPjsipGlobal,
  options: {
    endpoint_identifier_order: choices('endpointIdentifierOrder', IDENTIFIERS, {
      default: 'ip,username,anonymous',
      doc: 'Order in which requests are matched to endpoints (`match_header` identifies after these).',
    }),
    default_realm: text('defaultRealm', { default: 'asterisk', doc: 'Realm of Patchbay\'s challenges.' }),
    user_agent: text('userAgent', { default: 'Patchbay', doc: 'User-Agent and Server header.' }),
    default_from_user: text('defaultFromUser', { default: 'asterisk', doc: 'From user of requests without one.' }),
    max_forwards: int('maxForwards', 1, 255, { default: '70', doc: 'Max-Forwards of every request Patchbay sends (in and out of dialog, ACK and CANCEL included).' }),
    keep_alive_interval: int('keepAliveInterval', 0, 86_400, { default: '90', doc: 'Seconds between CRLF keep-alives on every TCP and TLS connection that carries SIP (0: none), keeping NAT bindings on the way open; the idle limit still counts only what the peer sends.' }),
    allow_sending_180_after_183: bool('allowSending180After183', {
      default: 'no',
      doc: 'Ringing on an unanswered call whose 183 already went out (or on an `inband_progress` endpoint) is sent as 180 Ringing rather than another 183; the ring tone is still played in band.',
    }),
    default_voicemail_extension: optionalText('defaultVoicemailExtension', { doc: 'Message-Account user of MWI for AORs and endpoints without a voicemail_extension.' }),
    regcontext: optionalText('regcontext', { doc: 'Context (made when the dialplan has none) where an endpoint gets `exten => <endpoint>,1,Noop(<endpoint>)` while it is online (a contact registered, or a static one reachable); an extension the dialplan has already wins. Kept across `dialplan reload`.' }),
    default_outbound_endpoint: optionalText('defaultOutboundEndpoint', { doc: 'Endpoint of out-of-dialog requests sent to a URI without one.', implemented: false }),
    ignore_uri_user_options: bool('ignoreUriUserOptions', { default: 'no', doc: 'Strip `;user=phone`-style options from the user part of request URIs before matching extensions.', implemented: false }),
    use_callerid_contact: bool('useCalleridContact', { default: 'no', doc: 'The user of the Contact of outgoing calls is the caller id number.', implemented: false }),
    norefersub: bool('norefersub', { default: 'yes', doc: 'Advertise RFC 4488 REFER subscription suppression (`Supported: norefersub`).', implemented: false }),
    all_codecs_on_empty_reinvite: bool('allCodecsOnEmptyReinvite', { default: 'no', doc: 'The answer to a re-INVITE without SDP offers every allowed codec, not only the call\'s.', implemented: false }),
    mwi_disable_initial_unsolicited: bool('mwiDisableInitialUnsolicited', { default: 'no', doc: 'No unsolicited MWI NOTIFY to every endpoint at start (Patchbay sends none at start anyway).', implemented: false }),
    unidentified_request_count: int('unidentifiedRequestCount', 1, 1_000_000, { default: '5', doc: 'Requests from an unknown source within unidentified_request_period that are logged as a security event.', implemented: false }),
    unidentified_request_period: int('unidentifiedRequestPeriod', 1, 86_400, { default: '5', doc: 'Seconds over which unidentified requests are counted.', implemented: false }),
    unidentified_request_prune_interval: int('unidentifiedRequestPruneInterval', 1, 86_400, { default: '30', doc: 'Seconds between prunes of the unidentified-request table.', implemented: false }),
  },
  finish: (draft) => draft,
});

/** The object types Patchbay builds, by Asterisk's type name, in the order docs list them. */
export const PJSIP_TYPES = new Map<string, ObjectType<PjsipObject>>(
  [ENDPOINT, AOR, AUTH, IDENTIFY, TRANSPORT, REGISTRATION, DOMAIN_ALIAS, GLOBAL, ACL, SYSTEM].map((declared) => [declared.type, declared]),
);

/** Types Asterisk has that Patchbay ignores (a warning, no error). */
export const IGNORED_TYPES: ReadonlySet<string> = new Set([
  'contact',
  'phoneprov',
  'resource_list',
  'outbound-publish',
  'inbound-publication',
  'asterisk-publication',
]);
