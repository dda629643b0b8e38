// SDES-SRTP of a stream that runs in a media worker (issue 25). The main thread keeps what offer/
// answer agreed (call-media.ts's SrtpSession, which there only holds the keys); the worker's stream
// protects and checks every packet with a session of its own, keyed by the same master keys. The
// keys cross once per offer/answer, as bytes in the stream's configure message, and nowhere else
// (never in a log line): the worker then re-keys its session by the rules the main thread follows
// (SrtpSession.rekey: a direction whose key is repeated keeps its ROC, SRTCP index and replay
// window; a new key starts it afresh), so a call behaves the same on either thread.
import type { MediaProtection } from '../rtp/protection.ts';
import { SrtpSession } from '../srtp/session.ts';
import { isSrtpSuiteName, MASTER_KEY_SALT_BYTES, MAX_MKI_BYTES, type SrtpMasterKey } from '../srtp/suites.ts';

/** The master keys of a stream's SRTP as they cross to its worker. */
export interface WorkerSrtpKeys {
  readonly local: SrtpMasterKey;
  readonly remote: SrtpMasterKey;
}

/**
 * The keys to send with a stream's configure: none without protection; undefined-and-refused
 * (`false`) for a protection a worker cannot take (anything but an SDES SrtpSession).
 */
export function workerSrtpKeys(protection: MediaProtection | undefined): WorkerSrtpKeys | undefined | false {
  if (protection === undefined) return undefined;
  if (!(protection instanceof SrtpSession)) return false;
  return { local: crossingKey(protection.local), remote: crossingKey(protection.remote) };
}

/**
 * A copy of the key in a buffer of its own: a Buffer from randomBytes may be a view of Node's shared
 * pool, and a message clones a view's whole underlying memory — other calls' keys with it.
 */
export function crossingKey(key: SrtpMasterKey): SrtpMasterKey {
  return { suite: key.suite, keySalt: new Uint8Array(key.keySalt), ...(key.mki ? { mki: { value: key.mki.value, bytes: key.mki.bytes } } : {}) };
}

/** A master key as it arrived in a message: checked like anything that crosses (a bad one refuses the configure). */
function isMasterKey(value: unknown): value is SrtpMasterKey {
  if (typeof value !== 'object' || value === null) return false;
  const { suite, keySalt, mki } = value as Record<string, unknown>;
  if (typeof suite !== 'string' || !isSrtpSuiteName(suite)) return false;
  if (!(keySalt instanceof Uint8Array) || keySalt.length !== MASTER_KEY_SALT_BYTES) return false;
  if (mki === undefined) return true;
  if (typeof mki !== 'object' || mki === null) return false;
  const { value: mkiValue, bytes } = mki as Record<string, unknown>;
  return Number.isInteger(bytes) && (bytes as number) >= 1 && (bytes as number) <= MAX_MKI_BYTES && Number.isInteger(mkiValue) && (mkiValue as number) >= 0 && (mkiValue as number) < 2 ** (8 * (bytes as number));
}

/**
 * The worker's session after a configure: none without keys; else the current one re-keyed (the
 * same rules as the main thread's), or a new one. Throws on keys that are not keys.
 */
export function keyedSession(current: SrtpSession | undefined, keys: WorkerSrtpKeys | undefined): SrtpSession | undefined {
  if (keys === undefined) return undefined;
  assertWorkerSrtpKeys(keys);
  if (!current) return new SrtpSession(keys.local, keys.remote);
  current.rekey(keys.local, keys.remote);
  return current;
}

/** Keys that crossed in a message (a configure's or a handshake's): throws on keys that are not keys. */
export function assertWorkerSrtpKeys(keys: WorkerSrtpKeys): void {
  if (typeof keys !== 'object' || keys === null || !isMasterKey(keys.local) || !isMasterKey(keys.remote)) throw new TypeError('configure: SRTP keys that are not master keys');
}
