/**
 * The external addresses of a transport behind NAT, applied to what leaves it as Asterisk's
 * res_pjsip_nat does: a message whose destination is inside one of the transport's local networks
 * (`local_net`) keeps the local addresses it was written with; any other destination — every one
 * when no local network is configured — sees the external ones:
 * - the first Contact's host (and port, with `external_signaling_port`) of requests and of
 *   responses, except a response to REGISTER (its Contacts are the registered ones, not ours) and
 *   a 302 to INVITE (its Contacts are where to go);
 * - the top Via's sent-by of requests (a response's Via is the peer's);
 * - with an SDP body, the session `c=` (and `o=` with it) and each stream's `c=` when the address
 *   written there is itself local (a media address already public is left alone).
 * Pure: a rewritten copy is returned, the message itself is never changed (a transaction
 * retransmits it, a CANCEL copies its Via).
 */
import { isIP } from 'node:net';
import { formatNameAddr, parseNameAddr } from './uri.ts';
import { SipRequest, SipResponse, formatVia, parseVia, splitList, type SipMessage } from './message.ts';

export interface OutboundNat {
  /** `external_signaling_address`: written in Contact and Via towards non-local destinations. */
  readonly signalingHost?: string;
  /** `external_signaling_port`: with signalingHost, the port written there (else the port as written). */
  readonly signalingPort?: number;
  /** `external_media_address`: written in SDP towards non-local destinations. */
  readonly mediaHost?: string;
  /** `local_net`: whether an address is inside a local network; undefined when none is configured. */
  readonly isLocal?: (address: string) => boolean;
}

/** Whether an address (an IP literal; a host name never is) counts as local for this transport. */
function local(nat: OutboundNat, address: string): boolean {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  return nat.isLocal !== undefined && isIP(bare) !== 0 && nat.isLocal(bare);
}

/** `message` as it must leave towards `destinationHost`: itself when nothing changes, else a rewritten copy. */
export function applyOutboundNat(message: SipMessage, destinationHost: string, nat: OutboundNat): SipMessage {
  if (local(nat, destinationHost)) return message;
  let headers = message.headers;
  let body = message.body;
  if (nat.signalingHost !== undefined) {
    const replaced = headers.slice();
    let changed = false;
    if (rewritesContact(message)) {
      const index = replaced.findIndex((header) => header.key === 'contact');
      const value = index < 0 ? undefined : contactAtExternal(replaced[index].value, nat.signalingHost, nat.signalingPort);
      if (value !== undefined) {
        replaced[index] = { ...replaced[index], value };
        changed = true;
      }
    }
    if (message.isRequest()) {
      const index = replaced.findIndex((header) => header.key === 'via');
      const value = index < 0 ? undefined : viaAtExternal(replaced[index].value, nat.signalingHost, nat.signalingPort);
      if (value !== undefined) {
        replaced[index] = { ...replaced[index], value };
        changed = true;
      }
    }
    if (changed) headers = replaced;
  }
  if (nat.mediaHost !== undefined && body.length > 0 && isSdp(message)) {
    const rewritten = sdpAtExternal(body.toString('utf8'), nat.mediaHost, (address) => nat.isLocal === undefined || local(nat, address));
    if (rewritten !== undefined) body = Buffer.from(rewritten, 'utf8');
  }
  if (headers === message.headers && body === message.body) return message;
  return copyWith(message, headers, body);
}

/** Not the Contacts of a REGISTER's response, nor those of a 302 to INVITE (Asterisk's exceptions). */
function rewritesContact(message: SipMessage): boolean {
  if (message.isRequest()) return true;
  const method = message.cseq()?.method.toUpperCase();
  if (method === 'REGISTER') return false;
  return !(method === 'INVITE' && message instanceof SipResponse && message.status === 302);
}

/** The first Contact of a Contact line at the external host (and port); undefined when it is no SIP(S) URI. */
function contactAtExternal(line: string, host: string, port: number | undefined): string | undefined {
  const items = splitList(line);
  const first = items[0] === undefined ? undefined : parseNameAddr(items[0]);
  if (!first || first.uri.kind !== 'sip') return undefined;
  const uri = { ...first.uri, host, ...(port !== undefined ? { port } : {}) };
  const text = formatNameAddr({ ...(first.displayName !== undefined ? { displayName: first.displayName } : {}), uri, params: first.params });
  return [text, ...items.slice(1)].join(', ');
}

/** A Via line's first value with its sent-by at the external host (and port). */
function viaAtExternal(line: string, host: string, port: number | undefined): string | undefined {
  const items = splitList(line);
  const via = items[0] === undefined ? null : parseVia(items[0]);
  if (!via) return undefined;
  const rewritten = formatVia({ ...via, host, ...(port !== undefined ? { port } : {}) });
  return [rewritten, ...items.slice(1)].join(', ');
}

function isSdp(message: SipMessage): boolean {
  return (message.get('content-type') ?? '').split(';')[0].trim().toLowerCase() === 'application/sdp';
}

/**
 * The SDP with its local connection addresses at `mediaHost`: the session `c=` (and `o=` with it,
 * as Asterisk keeps them equal) and every stream's `c=`. Undefined when nothing changed.
 */
export function sdpAtExternal(sdp: string, mediaHost: string, rewrites: (address: string) => boolean): string | undefined {
  const family = isIP(mediaHost) === 6 ? 'IP6' : 'IP4';
  const lines = sdp.split(/\r?\n/);
  let inMedia = false;
  let sessionRewritten = false;
  let changed = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('m=')) inMedia = true;
    const connection = /^c=IN (IP4|IP6) (\S+)$/.exec(line);
    if (!connection || !rewrites(connection[2])) continue;
    lines[i] = `c=IN ${family} ${mediaHost}`;
    changed = true;
    if (!inMedia) sessionRewritten = true;
  }
  if (sessionRewritten) {
    const index = lines.findIndex((line) => line.startsWith('o='));
    const origin = index < 0 ? null : /^(o=\S+ \S+ \S+ IN) (?:IP4|IP6) \S+$/.exec(lines[index]);
    if (origin) lines[index] = `${origin[1]} ${family} ${mediaHost}`;
  }
  return changed ? lines.join('\r\n') : undefined;
}

function copyWith(message: SipMessage, headers: SipMessage['headers'], body: Buffer): SipMessage {
  let copy: SipMessage;
  if (message instanceof SipRequest) {
    const request = new SipRequest(message.method, message.uri);
    request.uriText = message.uriText;
    request.version = message.version;
    copy = request;
  } else if (message instanceof SipResponse) {
    const response = new SipResponse(message.status, message.reason);
    response.version = message.version;
    copy = response;
  } else {
    return message;
  }
  copy.headers = headers;
  copy.body = body;
  return copy;
}
