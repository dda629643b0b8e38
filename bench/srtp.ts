// Per-packet cost of SRTP (AES_CM_128_HMAC_SHA1_80, a 20 ms G.711 packet: 12-byte header, 160
// bytes of payload) three ways, to choose the implementation by measurement:
//   - patchbay: src/media/srtp (one reused ECB cipher per session key for the AES-CM keystream,
//     HMAC-SHA1 with the key's pads precomputed, in preallocated arrays);
//   - node:crypto per packet: the textbook use of node:crypto (a Cipheriv aes-128-ctr and an Hmac
//     made for every packet, since neither can be reset);
//   - werift-rtp's SrtpSession (when installed: npm i --no-save werift-rtp, or WERIFT_RTP=<its
//     directory>; it is not a dependency of Patchbay).
// Prints ns/packet for protect and unprotect and how many garbage collections each loop caused.
// Run: node --expose-gc --import tsx bench/srtp.ts
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { SrtpReceiver, SrtpSender } from '../src/media/srtp/srtp-context.ts';
import { deriveSessionKey, LABEL } from '../src/media/srtp/aes-cm.ts';

const PACKETS = 300_000;
const gc = (globalThis as { gc?: () => void }).gc;
const keySalt = randomBytes(30);
const master = { suite: 'AES_CM_128_HMAC_SHA1_80' as const, keySalt };

function rtpPacket(sequence: number, room = 64): Buffer {
  const packet = Buffer.alloc(172 + room);
  packet[0] = 0x80;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE((sequence * 160) >>> 0, 4);
  packet.writeUInt32BE(0x12345678, 8);
  packet.fill(0xd5, 12, 172);
  return packet;
}

interface Way {
  readonly name: string;
  /** Protects the packet of index i (ROC·65536 + SEQ) and returns it as sent (valid until the next call). */
  protect(i: number): Uint8Array;
  /** A fresh receiving side (each lap of the measurement replays the same indices). */
  restart(): void;
  /** Unprotects what protect(i) returned; throws when it is refused. */
  unprotect(packet: Buffer, i: number): void;
}

const LAP = 20_000;

/**
 * Garbage collections seen while the measured loops ran: a per-packet path that allocates nothing
 * triggers none, one that allocates a few hundred bytes a packet triggers a scavenge every few
 * thousand packets (heap growth after a forced gc hides that: the garbage is collected).
 */
let collections = 0;
new PerformanceObserver((list) => {
  collections += list.getEntries().length;
}).observe({ entryTypes: ['gc'] });
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

async function measure(way: Way): Promise<void> {
  // One lap of protected packets made first, by a sender that starts at index 0 as the receiver assumes.
  const sealed = Array.from({ length: LAP }, (_, i) => Buffer.from(way.protect(i)));
  gc?.();
  await settle();
  collections = 0;
  let started = process.hrtime.bigint();
  for (let i = LAP; i < LAP + PACKETS; i++) way.protect(i);
  const protectNs = Number(process.hrtime.bigint() - started) / PACKETS;
  await settle();
  const protectCollections = collections;
  // Each lap unprotects fresh copies (decrypting is in place) with a fresh receiver, both made outside the clock.
  const copies = sealed.map((packet) => Buffer.from(packet));
  let unprotectNs = 0;
  let unprotectCollections = 0;
  const laps = Math.ceil(PACKETS / LAP);
  for (let lap = 0; lap < laps; lap++) {
    for (let i = 0; i < LAP; i++) sealed[i].copy(copies[i]);
    way.restart();
    gc?.();
    await settle();
    collections = 0;
    started = process.hrtime.bigint();
    for (let i = 0; i < LAP; i++) way.unprotect(copies[i], i);
    unprotectNs += Number(process.hrtime.bigint() - started);
    await settle();
    unprotectCollections += collections;
  }
  const count = laps * LAP;
  console.log(
    `${way.name.padEnd(26)} protect ${protectNs.toFixed(0).padStart(6)} ns/packet (${String(protectCollections).padStart(4)} GCs)   ` +
      `unprotect ${(unprotectNs / count).toFixed(0).padStart(6)} ns/packet (${String(unprotectCollections).padStart(4)} GCs)`,
  );
}

/** Ours. */
function patchbay(): Way {
  const sender = new SrtpSender(master);
  let receiver = new SrtpReceiver(master);
  const packets = Array.from({ length: 16 }, (_, i) => rtpPacket(i));
  return {
    name: 'patchbay (src/media/srtp)',
    protect(i) {
      const packet = packets[i % 16];
      packet.writeUInt16BE(i & 0xffff, 2);
      packet.fill(0xd5, 12, 172);
      const length = sender.protect(packet, 172);
      return packet.subarray(0, length);
    },
    restart() {
      receiver = new SrtpReceiver(master);
    },
    unprotect(packet) {
      if (receiver.unprotect(packet, packet.length) < 0) throw new Error('refused');
    },
  };
}

/** node:crypto as most code uses it: new objects per packet. */
function perPacketNodeCrypto(): Way {
  const key = keySalt.subarray(0, 16);
  const salt = keySalt.subarray(16);
  const sessionKey = deriveSessionKey(key, salt, LABEL.rtpKey, 16);
  const sessionSalt = deriveSessionKey(key, salt, LABEL.rtpSalt, 14);
  const authKey = deriveSessionKey(key, salt, LABEL.rtpAuth, 20);
  const iv = (sequence: number): Buffer => {
    const block = Buffer.alloc(16);
    sessionSalt.copy(block);
    block.writeUInt32BE((block.readUInt32BE(4) ^ 0x12345678) >>> 0, 4);
    block.writeUInt16BE(block.readUInt16BE(12) ^ sequence, 12);
    return block;
  };
  return {
    name: 'node:crypto per packet',
    protect(i) {
      const packet = rtpPacket(i, 0);
      const cipher = createCipheriv('aes-128-ctr', sessionKey, iv(i & 0xffff));
      const body = cipher.update(packet.subarray(12));
      const roc = Buffer.alloc(4);
      roc.writeUInt32BE(Math.floor(i / 65536));
      const header = packet.subarray(0, 12);
      const tag = createHmac('sha1', authKey).update(header).update(body).update(roc).digest().subarray(0, 10);
      return Buffer.concat([header, body, tag]);
    },
    unprotect(packet, i) {
      const roc = Buffer.alloc(4);
      roc.writeUInt32BE(Math.floor(i / 65536));
      const tag = createHmac('sha1', authKey).update(packet.subarray(0, packet.length - 10)).update(roc).digest();
      if (tag.compare(packet, packet.length - 10, packet.length, 0, 10) !== 0) throw new Error('auth');
      createCipheriv('aes-128-ctr', sessionKey, iv((packet[2] << 8) | packet[3])).update(packet.subarray(12, packet.length - 10));
    },
    restart() {},
  };
}

interface WeriftSession {
  encrypt(payload: Buffer, header: unknown): Buffer;
  decrypt(packet: Buffer): Buffer;
}

function werift(): Way | string {
  const require = createRequire(import.meta.url);
  let module: { SrtpSession: new (config: unknown) => WeriftSession; RtpHeader: { deSerialize(packet: Buffer): unknown }; ProtectionProfileAes128CmHmacSha1_80: number };
  try {
    const where = process.env.WERIFT_RTP ? path.resolve(process.env.WERIFT_RTP) : 'werift-rtp';
    module = require(where) as typeof module;
  } catch {
    return 'werift-rtp not installed (npm i --no-save werift-rtp, or WERIFT_RTP=<its directory>)';
  }
  const keys = { localMasterKey: keySalt.subarray(0, 16), localMasterSalt: keySalt.subarray(16), remoteMasterKey: keySalt.subarray(0, 16), remoteMasterSalt: keySalt.subarray(16) };
  const sender = new module.SrtpSession({ keys, profile: module.ProtectionProfileAes128CmHmacSha1_80 });
  let receiver = new module.SrtpSession({ keys, profile: module.ProtectionProfileAes128CmHmacSha1_80 });
  return {
    name: 'werift-rtp SrtpSession',
    protect(i) {
      const packet = rtpPacket(i, 0);
      return sender.encrypt(packet.subarray(12), module.RtpHeader.deSerialize(packet));
    },
    restart() {
      receiver = new module.SrtpSession({ keys, profile: module.ProtectionProfileAes128CmHmacSha1_80 });
    },
    unprotect(packet) {
      if (receiver.decrypt(packet)[12] !== 0xd5) throw new Error('not decrypted');
    },
  };
}

console.log(`SRTP AES_CM_128_HMAC_SHA1_80, 172-byte RTP packets, ${PACKETS} each way; GCs = collections during the measured loops`);
for (const way of [patchbay(), perPacketNodeCrypto(), werift()]) {
  if (typeof way === 'string') console.log(way);
  else await measure(way);
}
