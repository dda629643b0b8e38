// SRTP against published vectors: RFC 3711 Appendix B.2 (AES-CM keystream) and B.3 (key
// derivation), and the protected packets of libsrtp's srtp_validate (the same master key) for
// both suites and SRTCP; HMAC-SHA1 against node:crypto; then the behaviour around them: ROC
// across a sequence wrap, replays, forged tags, MKI, re-keying.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { AesCounterMode, deriveSessionKey, LABEL } from '../../../src/media/srtp/aes-cm.ts';
import { HmacSha1 } from '../../../src/media/srtp/hmac-sha1.ts';
import { SrtpSession } from '../../../src/media/srtp/session.ts';
import { SrtcpReceiver, SrtcpSender } from '../../../src/media/srtp/srtcp-context.ts';
import { SRTP_AUTH_FAILED, SRTP_REPLAYED, SrtpReceiver, SrtpSender } from '../../../src/media/srtp/srtp-context.ts';
import type { SrtpMasterKey, SrtpSuiteName } from '../../../src/media/srtp/suites.ts';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

const MASTER_KEY = hex('E1F97A0D3E018BE0D64FA32C06DE4139');
const MASTER_SALT = hex('0EC675AD498AFEEBB6960B3AABE6');
const master = (suite: SrtpSuiteName, mki?: SrtpMasterKey['mki']): SrtpMasterKey => ({ suite, keySalt: Buffer.concat([MASTER_KEY, MASTER_SALT]), ...(mki ? { mki } : {}) });

const RTP_PLAIN = hex('800f1234decafbadcafebabe' + 'ab'.repeat(16));
const SRTP_80 = hex('800f1234decafbadcafebabe 4e55dc4ce79978d88ca4d215949d2402 b78d6acc99ea179b8dbb');
const SRTP_32 = hex('800f1234decafbadcafebabe 4e55dc4ce79978d88ca4d215949d2402 b78d6acc');
const RTCP_PLAIN = hex('81c8000bcafebabe' + 'ab'.repeat(16));
const SRTCP_80 = hex('81c8000bcafebabe 7128035be487b9bdbef89041f977a5a8 80000001 993e08cd54d6c1230798');

/** `packet` copied into a buffer with room for the trailer. */
function roomy(packet: Uint8Array): Buffer {
  const buffer = Buffer.alloc(packet.length + 64);
  buffer.set(packet);
  return buffer;
}

describe('RFC 3711 Appendix B', () => {
  test('B.2: the AES-CM keystream of the session key and salt, index 0, SSRC 0', () => {
    const cm = new AesCounterMode(hex('2B7E151628AED2A6ABF7158809CF4F3C'), hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD'));
    const zeros = Buffer.alloc(48);
    assert.equal(cm.apply(zeros, 0, 48, 0, 0), true);
    assert.equal(zeros.toString('hex').toUpperCase(), 'E03EAD0935C95E80E166B16DD92B4EB4' + 'D23513162B02D0F72A43A2FE4A5F97AB' + '41E95B3BB0A2E8DD477901E4FCA894C0');
  });

  test('the keystream made ahead for consecutive packets is the one made for each alone (any order, length, SSRC)', () => {
    const key = randomBytes(16);
    const salt = randomBytes(14);
    const batched = new AesCounterMode(key, salt);
    let index = 70_000;
    for (let i = 0; i < 500; i++) {
      // Mostly the next index, sometimes a jump back or ahead, another SSRC, or a longer payload.
      index = i % 37 === 0 ? index - 5 : i % 53 === 0 ? index + 40 : index + 1;
      const ssrc = i % 101 === 0 ? 0xdead_beef : 0x0102_0304;
      const length = i % 29 === 0 ? 1400 : 160 + (i % 3);
      const expected = Buffer.alloc(length);
      new AesCounterMode(key, salt).apply(expected, 0, length, ssrc, index);
      const actual = Buffer.alloc(length + 4);
      assert.equal(batched.apply(actual, 2, 2 + length, ssrc, index), true);
      assert.deepEqual(actual.subarray(2, 2 + length), expected, `packet ${i}`);
    }
  });

  test('B.3: session encryption key, salt and authentication key', () => {
    assert.equal(deriveSessionKey(MASTER_KEY, MASTER_SALT, LABEL.rtpKey, 16).toString('hex').toUpperCase(), 'C61E7A93744F39EE10734AFE3FF7A087');
    assert.equal(deriveSessionKey(MASTER_KEY, MASTER_SALT, LABEL.rtpSalt, 14).toString('hex').toUpperCase(), '30CBBC08863D8C85D49DB34A9AE1');
    assert.equal(deriveSessionKey(MASTER_KEY, MASTER_SALT, LABEL.rtpAuth, 20).toString('hex').toUpperCase(), 'CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4');
  });
});

describe('protected packets (libsrtp srtp_validate vectors)', () => {
  for (const [suite, expected] of [['AES_CM_128_HMAC_SHA1_80', SRTP_80], ['AES_CM_128_HMAC_SHA1_32', SRTP_32]] as const) {
    test(`${suite}: protect gives the reference packet, unprotect gives the plain one back`, () => {
      const packet = roomy(RTP_PLAIN);
      const length = new SrtpSender(master(suite)).protect(packet, RTP_PLAIN.length);
      assert.equal(length, expected.length);
      assert.deepEqual(packet.subarray(0, length), expected);
      const received = roomy(expected);
      assert.equal(new SrtpReceiver(master(suite)).unprotect(received, expected.length), RTP_PLAIN.length);
      assert.deepEqual(received.subarray(0, RTP_PLAIN.length), RTP_PLAIN);
    });
  }

  test('SRTCP: protect gives the reference packet (index 1, encrypted), unprotect the plain one', () => {
    const packet = roomy(RTCP_PLAIN);
    const length = new SrtcpSender(master('AES_CM_128_HMAC_SHA1_80')).protect(packet, RTCP_PLAIN.length);
    assert.deepEqual(packet.subarray(0, length), SRTCP_80);
    const received = roomy(SRTCP_80);
    assert.equal(new SrtcpReceiver(master('AES_CM_128_HMAC_SHA1_32')).unprotect(received, SRTCP_80.length), RTCP_PLAIN.length, 'SRTCP has the 80-bit tag in both suites');
    assert.deepEqual(received.subarray(0, RTCP_PLAIN.length), RTCP_PLAIN);
  });
});

test('HMAC-SHA1 matches node:crypto for lengths around the block boundaries, with and without the ROC', () => {
  for (const keyLength of [20, 64, 100]) {
    const key = randomBytes(keyLength);
    const mac = new HmacSha1(key);
    for (let length = 0; length < 200; length += 1) {
      const data = randomBytes(length + 7);
      const out = Buffer.alloc(20);
      mac.sign(data, 3, 3 + length, undefined, out, 0, 20);
      assert.deepEqual(out, createHmac('sha1', key).update(data.subarray(3, 3 + length)).digest());
      mac.sign(data, 3, 3 + length, 0x01020304, out, 0, 20);
      assert.deepEqual(out, createHmac('sha1', key).update(data.subarray(3, 3 + length)).update(hex('01020304')).digest());
    }
  }
});

function rtp(sequence: number, ssrc = 0x11223344, payload = 160): Buffer {
  const packet = Buffer.alloc(12 + payload + 64);
  packet[0] = 0x80;
  packet.writeUInt16BE(sequence, 2);
  packet.writeUInt32BE((sequence * 160) >>> 0, 4);
  packet.writeUInt32BE(ssrc, 8);
  packet.fill(0x55, 12, 12 + payload);
  return packet;
}

describe('SRTP state', () => {
  test('the ROC follows a sequence wrap, with reordering around it', () => {
    const key = { suite: 'AES_CM_128_HMAC_SHA1_80' as const, keySalt: randomBytes(30) };
    const sender = new SrtpSender(key);
    const receiver = new SrtpReceiver(key);
    const sent = [65533, 65534, 65535, 0, 1, 2].map((sequence) => {
      const packet = rtp(sequence);
      return { packet, length: sender.protect(packet, 172) };
    });
    // 65535 arrives after 0 and 1: still the old ROC.
    for (const at of [0, 1, 3, 4, 2, 5]) {
      const { packet, length } = sent[at];
      assert.equal(receiver.unprotect(packet, length), 172, `packet ${at}`);
      assert.equal(packet[12], 0x55);
    }
  });

  test('a replayed packet, a forged tag and a packet too old for the window are refused', () => {
    const key = { suite: 'AES_CM_128_HMAC_SHA1_80' as const, keySalt: randomBytes(30) };
    const sender = new SrtpSender(key);
    const receiver = new SrtpReceiver(key);
    const packets = Array.from({ length: 200 }, (_, i) => {
      const packet = rtp(1000 + i);
      return { packet, length: sender.protect(packet, 172) };
    });
    const copy = Buffer.from(packets[0].packet);
    assert.equal(receiver.unprotect(packets[0].packet, packets[0].length), 172);
    assert.equal(receiver.unprotect(copy, packets[0].length), SRTP_REPLAYED);
    const forged = packets[1].packet;
    forged[20] ^= 1;
    assert.equal(receiver.unprotect(forged, packets[1].length), SRTP_AUTH_FAILED);
    assert.equal(receiver.unprotect(packets[199].packet, packets[199].length), 172);
    assert.equal(receiver.unprotect(packets[2].packet, packets[2].length), SRTP_REPLAYED, 'more than 128 behind the highest');
    assert.equal(receiver.unprotect(packets[100].packet, packets[100].length), 172, 'late but inside the window');
    // Someone else's key.
    const stranger = new SrtpSender({ suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: randomBytes(30) });
    const alien = rtp(1300);
    assert.equal(receiver.unprotect(alien, stranger.protect(alien, 172)), SRTP_AUTH_FAILED);
    assert.equal(receiver.unprotect(Buffer.alloc(15), 15), -1, 'shorter than a header and a tag');
  });

  test('MKI: carried between payload and tag, a different one refused', () => {
    const key = { suite: 'AES_CM_128_HMAC_SHA1_32' as const, keySalt: randomBytes(30), mki: { value: 7, bytes: 2 } };
    const packet = rtp(5);
    const length = new SrtpSender(key).protect(packet, 172);
    assert.equal(length, 172 + 2 + 4);
    assert.deepEqual([...packet.subarray(172, 174)], [0, 7]);
    const copy = Buffer.from(packet);
    assert.equal(new SrtpReceiver(key).unprotect(packet, length), 172);
    assert.equal(new SrtpReceiver({ ...key, mki: { value: 8, bytes: 2 } }).unprotect(copy, length), SRTP_AUTH_FAILED);
  });

  test('a session re-keyed with the same keys keeps its state; a new remote key starts that direction again', () => {
    const ours = { suite: 'AES_CM_128_HMAC_SHA1_80' as const, keySalt: randomBytes(30) };
    const theirs = { suite: 'AES_CM_128_HMAC_SHA1_80' as const, keySalt: randomBytes(30) };
    const local = new SrtpSession(ours, theirs);
    const far = new SrtpSession(theirs, ours);
    const first = rtp(10);
    const length = far.protectRtp(first, 172);
    const replay = Buffer.from(first);
    assert.equal(local.unprotectRtp(first, length), 172);
    local.rekey({ ...ours, keySalt: Buffer.from(ours.keySalt) }, { ...theirs, keySalt: Buffer.from(theirs.keySalt) });
    assert.equal(local.unprotectRtp(replay, length), SRTP_REPLAYED, 'same key: the replay window is kept');
    const newer = { suite: 'AES_CM_128_HMAC_SHA1_32' as const, keySalt: randomBytes(30) };
    local.rekey(ours, newer);
    const next = rtp(11);
    assert.equal(local.unprotectRtp(next, new SrtpSession(newer, ours).protectRtp(next, 172)), 172);
  });
});

test('hostile packets: random bytes and every single-bit change of a valid packet are refused, never thrown on', () => {
  const key = { suite: 'AES_CM_128_HMAC_SHA1_32' as const, keySalt: randomBytes(30), mki: { value: 3, bytes: 1 } };
  const rtpIn = new SrtpReceiver(key);
  const rtcpIn = new SrtcpReceiver(key);
  for (let i = 0; i < 2000; i++) {
    const length = i % 200;
    const junk = randomBytes(length);
    if (i % 2) junk[0] = 0x80 | (junk[0] & 0x3f);
    assert.ok(rtpIn.unprotect(junk, length) < 0);
    assert.ok(rtcpIn.unprotect(junk, length) < 0);
  }
  const sender = new SrtpSender(key);
  const packet = rtp(77, 0x5555, 40);
  const length = sender.protect(packet, 52);
  const sealed = Buffer.from(packet.subarray(0, length));
  for (let bit = 0; bit < length * 8; bit++) {
    const changed = Buffer.from(sealed);
    changed[bit >> 3] ^= 1 << (bit & 7);
    assert.ok(new SrtpReceiver(key).unprotect(changed, length) < 0, `bit ${bit}`);
  }
  assert.equal(new SrtpReceiver(key).unprotect(Buffer.from(sealed), length), 52);
});
