// SDES a=crypto attributes (RFC 4568 §9.1): `a=crypto:<tag> <suite> inline:<key||salt base64>[|lifetime][|MKI:length]`.
// Read from hostile SDP: every field is bounded and checked, and a line that is not exactly what
// Patchbay can use (another suite, another key method, several keys, session parameters, a long
// MKI) is dropped, as res_srtp ignores "crypto offers with unsupported parameters". Also the mask
// that keeps key material out of logs.
import { isSrtpSuiteName, MASTER_KEY_SALT_BYTES, MAX_MKI_BYTES, type SrtpMasterKey } from '../../media/srtp/suites.ts';

/** a=crypto lines looked at per m= line; more than this is not an offer anyone needs. */
export const MAX_CRYPTO_LINES = 16;
const MAX_TAG = 999_999_999;
/** The longest lifetime written (2^48 packets, SRTP's own limit). */
const MAX_LIFETIME = 2 ** 48;

/** One usable a=crypto line. */
export interface CryptoAttribute {
  readonly tag: number;
  readonly key: SrtpMasterKey;
  /** The key's lifetime in packets, when given (read and bounded; the session never runs that long). */
  readonly lifetime?: number;
}

/** sdp-transform's shape of an a=crypto line (in and out). */
export interface SdpCryptoLine {
  readonly id: number;
  readonly suite: string;
  readonly config: string;
  readonly sessionConfig?: string;
}

/** Reads one a=crypto line as sdp-transform split it; undefined when it is not usable. */
export function readCryptoLine(line: unknown): CryptoAttribute | undefined {
  if (typeof line !== 'object' || line === null) return undefined;
  const { id, suite, config, sessionConfig } = line as Record<string, unknown>;
  const tag = typeof id === 'number' ? id : typeof id === 'string' && /^\d{1,9}$/.test(id) ? Number(id) : NaN;
  if (!Number.isInteger(tag) || tag < 0 || tag > MAX_TAG) return undefined;
  if (typeof suite !== 'string' || !isSrtpSuiteName(suite)) return undefined;
  // Session parameters (KDR, UNENCRYPTED_SRTP, WSH …) change what the key means: not supported.
  if (sessionConfig !== undefined && sessionConfig !== null && sessionConfig !== '') return undefined;
  if (typeof config !== 'string' || config.length > 128) return undefined;
  const params = readKeyParams(config);
  return params ? { tag, key: { suite, ...params.key }, ...(params.lifetime === undefined ? {} : { lifetime: params.lifetime }) } : undefined;
}

/** `inline:<base64>[|lifetime][|MKI:length]`, one key only (a `;` list of keys is not supported). */
function readKeyParams(config: string): { key: Omit<SrtpMasterKey, 'suite'>; lifetime?: number } | undefined {
  const match = /^inline:([A-Za-z0-9+/]{40})((?:\|[^|;]{1,24}){0,2})$/.exec(config);
  if (!match) return undefined;
  const keySalt = Buffer.from(match[1], 'base64');
  if (keySalt.length !== MASTER_KEY_SALT_BYTES) return undefined;
  let lifetime: number | undefined;
  let mki: SrtpMasterKey['mki'];
  const extras = match[2] === '' ? [] : match[2].slice(1).split('|');
  for (const [position, extra] of extras.entries()) {
    const mkiMatch = /^(\d{1,10}):(\d{1,3})$/.exec(extra);
    if (mkiMatch) {
      const value = Number(mkiMatch[1]);
      const bytes = Number(mkiMatch[2]);
      if (mki || position !== extras.length - 1 || bytes < 1 || bytes > MAX_MKI_BYTES || value >= 256 ** bytes) return undefined;
      mki = { value, bytes };
      continue;
    }
    const power = /^2\^(\d{1,2})$/.exec(extra);
    const count = power ? 2 ** Number(power[1]) : /^\d{1,15}$/.test(extra) ? Number(extra) : NaN;
    if (lifetime !== undefined || position !== 0 || !Number.isFinite(count) || count < 1 || count > MAX_LIFETIME) return undefined;
    lifetime = count;
  }
  return { key: { keySalt, ...(mki ? { mki } : {}) }, ...(lifetime === undefined ? {} : { lifetime }) };
}

/** Our a=crypto line for `key` under `tag`, as sdp-transform writes it. */
export function cryptoLine(tag: number, key: SrtpMasterKey): SdpCryptoLine {
  const mki = key.mki ? `|${key.mki.value}:${key.mki.bytes}` : '';
  return { id: tag, suite: key.suite, config: `inline:${Buffer.from(key.keySalt).toString('base64')}${mki}` };
}

/**
 * `text` with every SDES key replaced by a mask: traces and logs show that a key was sent and its
 * parameters, never the key (whoever reads the log could otherwise decrypt the call).
 */
export function maskSdesKeys(text: string): string {
  return text.includes('inline:') ? text.replace(/inline:[^|\s;]*/g, 'inline:[masked]') : text;
}
