// AES in counter mode as SRTP uses it (RFC 3711 §4.1.1): the keystream of block j is
// AES_k(IV + j), the IV being the session salt shifted 16 bits, XORed with the SSRC and the
// packet index. node:crypto has no reusable CTR cipher (one Cipheriv per IV) and cannot write into
// a caller's buffer, so one ECB cipher per session key is kept and fed counter blocks: AES stays in
// OpenSSL (AES-NI, no table lookups an attacker could time, unlike AES written in JS). Packets come
// with consecutive indices, so the keystream of the next packets is made in one call and kept: one
// native call and one output Buffer per KEYSTREAM_BATCH packets instead of per packet.
import { createCipheriv, type Cipher } from 'node:crypto';

const BLOCK = 16;
/** Largest payload encrypted at once: a UDP datagram on an Ethernet path and then some. */
export const MAX_ENCRYPTED_BYTES = 2048;
const MAX_BLOCKS = MAX_ENCRYPTED_BYTES / BLOCK;
/** Packets whose keystream is made together (fewer when their payloads are long). */
const KEYSTREAM_BATCH = 16;
/** Counter blocks fed to the cipher at once. */
const BATCH_BLOCKS = 256;

export class AesCounterMode {
  readonly #ecb: Cipher;
  readonly #salt = new Uint8Array(14);
  readonly #counters = Buffer.alloc(BATCH_BLOCKS * BLOCK);
  /** Views of the first n blocks of #counters, made once (a subarray per call would allocate). */
  readonly #views: Buffer[];
  readonly #iv = new Uint8Array(BLOCK);
  /** The keystream made last: for `#count` packets from index `#first` of `#ssrc`, `#blocks` blocks each. */
  #keystream: Buffer = Buffer.alloc(0);
  #ssrc = -1;
  #first = -1;
  #count = 0;
  #blocks = 0;

  constructor(key: Uint8Array, salt: Uint8Array) {
    this.#ecb = createCipheriv(`aes-${key.length * 8}-ecb`, key, null);
    this.#ecb.setAutoPadding(false);
    this.#salt.set(salt.subarray(0, 14));
    this.#views = Array.from({ length: BATCH_BLOCKS + 1 }, (_, n) => this.#counters.subarray(0, n * BLOCK));
  }

  /**
   * XORs the keystream for `ssrc` and packet index `index` (48 bits: ROC·65536 + SEQ for SRTP, the
   * 31-bit SRTCP index) into `data[start, end)`; false when the span is longer than supported.
   */
  apply(data: Uint8Array, start: number, end: number, ssrc: number, index: number): boolean {
    const length = end - start;
    if (length <= 0) return length === 0;
    const blocks = Math.ceil(length / BLOCK);
    if (blocks > MAX_BLOCKS) return false;
    const slot = index - this.#first;
    if (ssrc !== this.#ssrc || slot < 0 || slot >= this.#count || blocks > this.#blocks) {
      this.#make(ssrc, index, blocks);
      return this.apply(data, start, end, ssrc, index);
    }
    const keystream = this.#keystream;
    const at = slot * this.#blocks * BLOCK;
    for (let i = 0; i < length; i++) data[start + i] ^= keystream[at + i];
    return true;
  }

  /** Makes the keystream of the packets from `index` on (as many as fit), `blocks` blocks each. */
  #make(ssrc: number, index: number, blocks: number): void {
    const count = Math.max(1, Math.min(KEYSTREAM_BATCH, Math.floor(BATCH_BLOCKS / blocks)));
    const counters = this.#counters;
    const iv = this.#iv;
    for (let packet = 0; packet < count; packet++) {
      this.#ivFor(ssrc, index + packet);
      for (let j = 0; j < blocks; j++) {
        const at = (packet * blocks + j) * BLOCK;
        for (let i = 0; i < 14; i++) counters[at + i] = iv[i];
        counters[at + 14] = j >>> 8;
        counters[at + 15] = j & 0xff;
      }
    }
    this.#keystream = this.#ecb.update(this.#views[count * blocks]);
    this.#ssrc = ssrc;
    this.#first = index;
    this.#count = count;
    this.#blocks = blocks;
  }

  /** The IV of (ssrc, index) into #iv, its last two bytes (the block counter) zero. */
  #ivFor(ssrc: number, index: number): void {
    const iv = this.#iv;
    iv.set(this.#salt);
    iv[14] = 0;
    iv[15] = 0;
    iv[4] ^= ssrc >>> 24;
    iv[5] ^= (ssrc >>> 16) & 0xff;
    iv[6] ^= (ssrc >>> 8) & 0xff;
    iv[7] ^= ssrc & 0xff;
    const high = Math.floor(index / 0x1_0000_0000);
    const low = index >>> 0;
    iv[8] ^= (high >>> 8) & 0xff;
    iv[9] ^= high & 0xff;
    iv[10] ^= low >>> 24;
    iv[11] ^= (low >>> 16) & 0xff;
    iv[12] ^= (low >>> 8) & 0xff;
    iv[13] ^= low & 0xff;
  }
}

/**
 * RFC 3711 §4.3.1 key derivation with key_derivation_rate 0 (what SDES without `|KDR` means): the
 * session key for `label` is the AES-CM keystream under the master key whose IV is the master
 * salt XORed with the label at bit 48 (byte 7 of the 14).
 */
export function deriveSessionKey(masterKey: Uint8Array, masterSalt: Uint8Array, label: number, bytes: number): Buffer {
  const iv = Buffer.alloc(BLOCK);
  iv.set(masterSalt.subarray(0, 14));
  iv[7] ^= label;
  const blocks = Math.ceil(bytes / BLOCK);
  const input = Buffer.alloc(blocks * BLOCK);
  for (let j = 0; j < blocks; j++) {
    iv.copy(input, j * BLOCK, 0, 14);
    input[j * BLOCK + 14] = j >>> 8;
    input[j * BLOCK + 15] = j & 0xff;
  }
  const ecb = createCipheriv(`aes-${masterKey.length * 8}-ecb`, masterKey, null);
  ecb.setAutoPadding(false);
  return Buffer.concat([ecb.update(input), ecb.final()]).subarray(0, bytes);
}

/** The labels of RFC 3711 §4.3.1. */
export const LABEL = { rtpKey: 0, rtpAuth: 1, rtpSalt: 2, rtcpKey: 3, rtcpAuth: 4, rtcpSalt: 5 } as const;
