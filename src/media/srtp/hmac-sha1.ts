// HMAC-SHA1 (RFC 2104 over FIPS 180-4 SHA-1) for SRTP's per-packet authentication, written here
// because node:crypto's Hmac is single-use: one object per packet (bench/srtp.ts measures the
// difference). The key's inner and outer pad blocks are compressed once; a packet then costs its
// own blocks plus one outer block, all in preallocated arrays: nothing is allocated per packet.

const BLOCK_BYTES = 64;
const DIGEST_BYTES = 20;

export class HmacSha1 {
  /** The chaining state after the key's inner / outer pad block. */
  readonly #innerStart = new Int32Array(5);
  readonly #outerStart = new Int32Array(5);
  readonly #state = new Int32Array(5);
  readonly #words = new Int32Array(80);
  readonly #block = new Uint8Array(BLOCK_BYTES);
  readonly #innerDigest = new Uint8Array(DIGEST_BYTES);
  #filled = 0;
  #total = 0;

  constructor(key: Uint8Array) {
    let material = key;
    if (material.length > BLOCK_BYTES) {
      // RFC 2104: a key longer than a block is hashed first (SRTP's 20-byte keys never are).
      this.#begin(INITIAL);
      this.#absorb(material, 0, material.length);
      const digest = new Uint8Array(DIGEST_BYTES);
      this.#finish(digest, 0, DIGEST_BYTES);
      material = digest;
    }
    const pad = new Uint8Array(BLOCK_BYTES);
    for (const [start, byte] of [[this.#innerStart, 0x36], [this.#outerStart, 0x5c]] as const) {
      pad.fill(byte);
      for (let i = 0; i < material.length; i++) pad[i] = material[i] ^ byte;
      this.#begin(INITIAL);
      this.#absorb(pad, 0, BLOCK_BYTES);
      start.set(this.#state);
    }
  }

  /**
   * The MAC of `data[start, end)` followed by the 32-bit big-endian `trailer` when given (SRTP's
   * ROC), its first `tagBytes` written at `out[outOffset]`.
   */
  sign(data: Uint8Array, start: number, end: number, trailer: number | undefined, out: Uint8Array, outOffset: number, tagBytes: number): void {
    this.#begin(this.#innerStart, BLOCK_BYTES);
    this.#absorb(data, start, end);
    if (trailer !== undefined) this.#absorbWord(trailer);
    this.#finish(this.#innerDigest, 0, DIGEST_BYTES);
    this.#begin(this.#outerStart, BLOCK_BYTES);
    this.#absorb(this.#innerDigest, 0, DIGEST_BYTES);
    this.#finish(out, outOffset, tagBytes);
  }

  /**
   * Whether `data[tagOffset, tagOffset + tagBytes)` is the MAC of `data[start, end)` (+ trailer),
   * compared in time that does not depend on where they differ.
   */
  verify(data: Uint8Array, start: number, end: number, trailer: number | undefined, tagOffset: number, tagBytes: number): boolean {
    this.sign(data, start, end, trailer, this.#innerDigest, 0, DIGEST_BYTES);
    let difference = 0;
    for (let i = 0; i < tagBytes; i++) difference |= this.#innerDigest[i] ^ data[tagOffset + i];
    return difference === 0;
  }

  #begin(state: Int32Array, already = 0): void {
    this.#state.set(state);
    this.#filled = 0;
    this.#total = already;
  }

  #absorb(data: Uint8Array, start: number, end: number): void {
    const block = this.#block;
    this.#total += end - start;
    let at = start;
    while (at < end) {
      if (this.#filled === 0 && end - at >= BLOCK_BYTES) {
        compress(this.#state, this.#words, data, at);
        at += BLOCK_BYTES;
        continue;
      }
      const take = Math.min(BLOCK_BYTES - this.#filled, end - at);
      for (let i = 0; i < take; i++) block[this.#filled + i] = data[at + i];
      this.#filled += take;
      at += take;
      if (this.#filled === BLOCK_BYTES) {
        compress(this.#state, this.#words, block, 0);
        this.#filled = 0;
      }
    }
  }

  #absorbWord(word: number): void {
    const block = this.#block;
    for (let shift = 24; shift >= 0; shift -= 8) {
      block[this.#filled++] = (word >>> shift) & 0xff;
      if (this.#filled === BLOCK_BYTES) {
        compress(this.#state, this.#words, block, 0);
        this.#filled = 0;
      }
    }
    this.#total += 4;
  }

  /** Pads, compresses the last block(s) and writes the first `bytes` of the digest. */
  #finish(out: Uint8Array, offset: number, bytes: number): void {
    const block = this.#block;
    const bits = this.#total * 8;
    block[this.#filled++] = 0x80;
    if (this.#filled > BLOCK_BYTES - 8) {
      block.fill(0, this.#filled);
      compress(this.#state, this.#words, block, 0);
      this.#filled = 0;
    }
    block.fill(0, this.#filled, BLOCK_BYTES - 8);
    const high = Math.floor(bits / 0x1_0000_0000);
    const low = bits >>> 0;
    block[56] = high >>> 24;
    block[57] = (high >>> 16) & 0xff;
    block[58] = (high >>> 8) & 0xff;
    block[59] = high & 0xff;
    block[60] = low >>> 24;
    block[61] = (low >>> 16) & 0xff;
    block[62] = (low >>> 8) & 0xff;
    block[63] = low & 0xff;
    compress(this.#state, this.#words, block, 0);
    const state = this.#state;
    for (let i = 0; i < bytes; i++) out[offset + i] = (state[i >> 2] >>> (24 - (i & 3) * 8)) & 0xff;
  }
}

const INITIAL = Int32Array.of(0x67452301, 0xefcdab89 | 0, 0x98badcfe | 0, 0x10325476, 0xc3d2e1f0 | 0);

/** One SHA-1 compression of the 64 bytes at `data[at]` into `state`. */
function compress(state: Int32Array, w: Int32Array, data: Uint8Array, at: number): void {
  for (let i = 0; i < 16; i++) {
    const j = at + i * 4;
    w[i] = (data[j] << 24) | (data[j + 1] << 16) | (data[j + 2] << 8) | data[j + 3];
  }
  for (let i = 16; i < 80; i++) {
    const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
    w[i] = (x << 1) | (x >>> 31);
  }
  let a = state[0];
  let b = state[1];
  let c = state[2];
  let d = state[3];
  let e = state[4];
  for (let i = 0; i < 80; i++) {
    let f: number;
    let k: number;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc | 0;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6 | 0;
    }
    const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  state[0] = (state[0] + a) | 0;
  state[1] = (state[1] + b) | 0;
  state[2] = (state[2] + c) | 0;
  state[3] = (state[3] + d) | 0;
  state[4] = (state[4] + e) | 0;
}
