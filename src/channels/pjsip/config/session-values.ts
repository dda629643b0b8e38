// The endpoint options that shape a call's session as the call needs them: Asterisk's `100rel`,
// `timers*` and codec preferences (`incoming_call_offer_pref` / `outgoing_call_offer_pref`, or their
// `codec_prefs_*` forms, `prefer: pending, keep: first`) turned into the SIP stack's terms.
import type { ReliableProvisionalMode } from '../../../sip/reliable-provisional.ts';
import type { CodecPreference } from '../../../sip/sdp/codec-preference.ts';
import type { SessionTimerSettings } from '../../../sip/session-timer.ts';
import type { IncomingOfferPref, OutgoingOfferPref, PjsipEndpoint } from './types.ts';
import { shown, type Parsed } from './values.ts';

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(error: string): Parsed<T> => ({ ok: false, error });

/** incoming_call_offer_pref: local, local_first, remote, remote_first. */
export function incomingPreference(value: IncomingOfferPref): CodecPreference {
  const [side, first] = value.split('_');
  return { prefer: side === 'local' ? 'local' : 'remote', operation: 'intersect', keep: first ? 'first' : 'all' };
}

/** outgoing_call_offer_pref: local, local_merge, local_first, remote, remote_merge, remote_first. */
export function outgoingPreference(value: OutgoingOfferPref): CodecPreference {
  const [side, variant] = value.split('_');
  const prefer = side === 'local' ? 'local' : 'remote';
  // local_first offers the first local codec whatever the core has (a union cut to one); remote_first the first common one.
  if (variant === 'first') return { prefer, operation: prefer === 'local' ? 'union' : 'intersect', keep: 'first' };
  return { prefer, operation: variant === 'merge' ? 'union' : 'intersect', keep: 'all' };
}

/**
 * codec_prefs_incoming_offer / codec_prefs_outgoing_offer: `name: value` pairs separated by commas,
 * any order (`prefer: pending|configured`, `operation: intersect|union|…`, `keep: all|first`,
 * `transcode: allow|prevent`). `pending` is the other side's list. Operations and transcode values
 * Patchbay does not implement are errors rather than silently different behaviour.
 */
export function parseCodecPrefs(value: string, base: CodecPreference, offer: boolean): Parsed<CodecPreference> {
  let result: CodecPreference = base;
  for (const item of value.split(',').slice(0, 16)) {
    if (item.trim() === '') continue;
    const match = /^\s*([a-z_]{1,32})\s*:\s*([a-z_]{1,32})\s*$/i.exec(item);
    if (!match) return fail(`${shown(item)} is not name: value`);
    const name = match[1].toLowerCase();
    const setting = match[2].toLowerCase();
    if (name === 'prefer' && (setting === 'pending' || setting === 'configured')) result = { ...result, prefer: setting === 'pending' ? 'remote' : 'local' };
    else if (name === 'operation' && (setting === 'intersect' || (offer && setting === 'union'))) result = { ...result, operation: setting };
    else if (name === 'keep' && (setting === 'all' || setting === 'first')) result = { ...result, keep: setting };
    else if (name === 'transcode' && setting === 'allow') continue;
    else return fail(`${shown(item)} is not supported by Patchbay (prefer: pending|configured, operation: intersect${offer ? '|union' : ''}, keep: all|first, transcode: allow)`);
  }
  return ok(result);
}

/** The answer's codecs under preferred_codec_only: allow='s first codec the offer has. */
const PREFERRED_CODEC_ONLY: CodecPreference = { prefer: 'local', operation: 'intersect', keep: 'first' };

/** What a call needs of its endpoint's session options. */
export interface EndpointSessionOptions {
  readonly reliableProvisionals: ReliableProvisionalMode;
  readonly sessionTimers: SessionTimerSettings;
  readonly incomingOfferPref: CodecPreference;
  readonly outgoingOfferPref: CodecPreference;
}

export function endpointSessionOptions(endpoint: PjsipEndpoint): EndpointSessionOptions {
  return {
    reliableProvisionals: endpoint.rel100,
    sessionTimers: { mode: endpoint.timers === 'forced' ? 'always' : endpoint.timers, minSe: endpoint.timersMinSe, sessionExpires: endpoint.timersSessExpires },
    // preferred_codec_only is local_first (a conflicting preference refused the endpoint at load).
    incomingOfferPref: endpoint.preferredCodecOnly ? PREFERRED_CODEC_ONLY : (endpoint.codecPrefsIncomingOffer ?? incomingPreference(endpoint.incomingCallOfferPref)),
    outgoingOfferPref: endpoint.codecPrefsOutgoingOffer ?? outgoingPreference(endpoint.outgoingCallOfferPref),
  };
}
