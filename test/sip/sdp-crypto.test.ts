// SDES in SDP (RFC 4568): a=crypto read and written, hostile lines dropped or refused without a
// throw, and chan_pjsip's rules for which offers an endpoint takes with media_encryption=no,
// sdes and sdes + optimistic (488 for RTP/SAVP without sdes and for plain RTP with it).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import type { SrtpMasterKey } from '../../src/media/srtp/suites.ts';
import { acceptAnswer, answerOffer, buildOffer, maskSdesKeys, readCryptoLine, readSdp, type LocalMedia, type LocalSdes } from '../../src/sip/sdp/index.ts';

const sdp = (...lines: string[]) => lines.join('\r\n') + '\r\n';
const KEY = randomBytes(30);
const INLINE = `inline:${KEY.toString('base64')}`;

const ours = (): SrtpMasterKey[] => [
  { suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: randomBytes(30) },
  { suite: 'AES_CM_128_HMAC_SHA1_32', keySalt: randomBytes(30) },
];
const LOCAL: LocalMedia = { address: '192.0.2.10', port: 10000, codecs: ['ulaw', 'alaw'], sessionId: '42', sessionVersion: 7 };
const withSdes = (optimistic = false): LocalMedia & { sdes: LocalSdes } => ({ ...LOCAL, sdes: { keys: ours(), optimistic } });

function offer(profile: string, ...crypto: string[]): string {
  return sdp('v=0', 'o=phone 1 1 IN IP4 198.51.100.7', 's=-', 'c=IN IP4 198.51.100.7', 't=0 0', `m=audio 40000 ${profile} 0`, 'a=rtpmap:0 PCMU/8000', ...crypto.map((line) => `a=crypto:${line}`));
}

describe('a=crypto lines', () => {
  test('key, salt, lifetime and MKI are read', () => {
    const line = readCryptoLine({ id: 3, suite: 'AES_CM_128_HMAC_SHA1_32', config: `${INLINE}|2^20|7:2` });
    assert.ok(line);
    assert.equal(line.tag, 3);
    assert.equal(line.lifetime, 2 ** 20);
    assert.deepEqual(line.key.mki, { value: 7, bytes: 2 });
    assert.deepEqual(Buffer.from(line.key.keySalt), KEY);
    assert.equal(readCryptoLine({ id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `${INLINE}|1:4` })?.key.mki?.bytes, 4);
  });

  test('what cannot be used is dropped', () => {
    const bad: unknown[] = [
      { id: 1, suite: 'AES_256_CM_HMAC_SHA1_80', config: INLINE },
      { id: 1, suite: 'F8_128_HMAC_SHA1_80', config: INLINE },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: INLINE.slice(0, -4) },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `${INLINE}==` },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `uri:${KEY.toString('base64')}` },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `${INLINE};${INLINE}` },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `${INLINE}|1:200` },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `${INLINE}|300:1` },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `${INLINE}|2^99` },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `${INLINE}|1:4|2^20` },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `${INLINE}|x|y|z` },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: INLINE, sessionConfig: 'UNENCRYPTED_SRTP' },
      { id: 1e10, suite: 'AES_CM_128_HMAC_SHA1_80', config: INLINE },
      { id: Number.NaN, suite: 'AES_CM_128_HMAC_SHA1_80', config: INLINE },
      { id: 1, suite: 'AES_CM_128_HMAC_SHA1_80', config: `${INLINE}|${'1'.repeat(500)}` },
      null,
      'crypto',
    ];
    for (const line of bad) assert.equal(readCryptoLine(line), undefined, JSON.stringify(line));
  });

  test('readSdp keeps usable lines, notes that crypto was offered, and refuses a flood of lines', () => {
    const read = readSdp(offer('RTP/AVP', `1 AES_256_CM_HMAC_SHA1_80 ${INLINE}`, `2 AES_CM_128_HMAC_SHA1_80 ${INLINE}`, 'garbage here'));
    assert.ok(read.ok);
    assert.deepEqual(read.session.media[0].crypto.map((line) => line.tag), [2]);
    assert.equal(read.session.media[0].cryptoOffered, true);
    const flood = readSdp(offer('RTP/SAVP', ...Array.from({ length: 40 }, (_, i) => `${i} AES_CM_128_HMAC_SHA1_80 ${INLINE}`)));
    assert.equal(flood.ok, false);
  });

  test('keys are masked for logs', () => {
    const text = `a=crypto:1 AES_CM_128_HMAC_SHA1_80 ${INLINE}|2^20|1:4\r\na=crypto:2 AES_CM_128_HMAC_SHA1_32 ${INLINE}\r\n`;
    const masked = maskSdesKeys(text);
    assert.doesNotMatch(masked, new RegExp(KEY.toString('base64').slice(0, 20).replace(/[+/]/g, '.')));
    assert.match(masked, /a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\[masked\]\|2\^20\|1:4/);
    assert.equal(maskSdesKeys('v=0\r\n'), 'v=0\r\n');
  });
});

describe('offers', () => {
  test('media_encryption=sdes offers RTP/SAVP with one line per suite, tags from 1', () => {
    const local = withSdes();
    const text = buildOffer(local);
    assert.match(text, /m=audio 10000 RTP\/SAVP 0 8 101/);
    assert.match(text, new RegExp(`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.from(local.sdes.keys[0].keySalt).toString('base64').replace(/[+/]/g, '\\$&')}\r\n`));
    assert.match(text, /a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:/);
  });

  test('optimistic offers RTP/AVP with a=crypto; without sdes nothing changes', () => {
    assert.match(buildOffer(withSdes(true)), /m=audio 10000 RTP\/AVP 0 8 101\r\n[^]*a=crypto:1 /);
    assert.doesNotMatch(buildOffer(LOCAL), /crypto|SAVP/);
  });
});

describe('answers (chan_pjsip rules)', () => {
  test('without sdes: RTP/SAVP gets 488, a=crypto on RTP/AVP is ignored', () => {
    const refused = answerOffer(offer('RTP/SAVP', `1 AES_CM_128_HMAC_SHA1_80 ${INLINE}`), LOCAL);
    assert.equal(refused.ok, false);
    assert.equal(!refused.ok && refused.status, 488);
    const plain = answerOffer(offer('RTP/AVP', `1 AES_CM_128_HMAC_SHA1_80 ${INLINE}`), LOCAL);
    assert.ok(plain.ok);
    assert.equal(plain.media.srtp, undefined);
    assert.doesNotMatch(plain.sdp, /crypto/);
  });

  test('sdes: plain RTP/AVP gets 488; RTP/SAVP is answered with the first usable line\'s tag and our key of its suite', () => {
    const local = withSdes();
    const refused = answerOffer(offer('RTP/AVP'), local);
    assert.equal(!refused.ok && refused.status, 488);
    const answer = answerOffer(offer('RTP/SAVP', `1 AES_256_CM_HMAC_SHA1_80 ${INLINE}`, `4 AES_CM_128_HMAC_SHA1_32 ${INLINE}|2^31|1:1`, `5 AES_CM_128_HMAC_SHA1_80 ${INLINE}`), local);
    assert.ok(answer.ok);
    assert.match(answer.sdp, /m=audio 10000 RTP\/SAVP 0\r\n/);
    const lines = answer.sdp.split('\r\n').filter((line) => line.startsWith('a=crypto:'));
    assert.deepEqual(lines, [`a=crypto:4 AES_CM_128_HMAC_SHA1_32 inline:${Buffer.from(local.sdes.keys[1].keySalt).toString('base64')}`]);
    assert.equal(answer.media.srtp?.tag, 4);
    assert.deepEqual(answer.media.srtp?.remote.mki, { value: 1, bytes: 1 });
    assert.deepEqual(Buffer.from(answer.media.srtp!.remote.keySalt), KEY);
  });

  test('sdes: an optimistic offer (RTP/AVP with crypto) is answered in RTP/AVP with crypto; no usable line → 488', () => {
    const answer = answerOffer(offer('RTP/AVP', `1 AES_CM_128_HMAC_SHA1_80 ${INLINE}`), withSdes());
    assert.ok(answer.ok);
    assert.match(answer.sdp, /m=audio 10000 RTP\/AVP 0\r\n[^]*a=crypto:1 AES_CM_128_HMAC_SHA1_80/);
    const refused = answerOffer(offer('RTP/SAVP', `1 AES_256_CM_HMAC_SHA1_80 ${INLINE}`, 'nonsense'), withSdes());
    assert.equal(!refused.ok && refused.status, 488);
  });

  test('optimistic: plain RTP is answered in the clear, RTP/SAVP with crypto encrypted', () => {
    const plain = answerOffer(offer('RTP/AVP'), withSdes(true));
    assert.ok(plain.ok);
    assert.equal(plain.media.srtp, undefined);
    const secure = answerOffer(offer('RTP/SAVP', `9 AES_CM_128_HMAC_SHA1_80 ${INLINE}`), withSdes(true));
    assert.ok(secure.ok);
    assert.match(secure.sdp, /RTP\/SAVP[^]*a=crypto:9 AES_CM_128_HMAC_SHA1_80/);
  });

  test('hostile crypto lines never throw', () => {
    const lines = ['', ' ', '1', '1 AES_CM_128_HMAC_SHA1_80', `x AES_CM_128_HMAC_SHA1_80 ${INLINE}`, `1 AES_CM_128_HMAC_SHA1_80 inline:${'A'.repeat(3000)}`, `99999999999 AES_CM_128_HMAC_SHA1_80 ${INLINE}`, `1 AES_CM_128_HMAC_SHA1_80 ${INLINE}|${'9'.repeat(40)}:${'9'.repeat(40)}`, '1 \u0000\u0001 inline:\u00ff'];
    for (const line of lines) {
      const result = answerOffer(offer('RTP/SAVP', line), withSdes());
      assert.equal(result.ok, false, line);
    }
  });
});

describe('answers to our offers', () => {
  test('the tag names our line; its suite must match; the far end\'s key is taken', () => {
    const local = withSdes();
    const answer = (profile: string, ...crypto: string[]) => acceptAnswer(offer(profile, ...crypto), local);
    const good = answer('RTP/SAVP', `2 AES_CM_128_HMAC_SHA1_32 ${INLINE}`);
    assert.ok(good.ok);
    assert.equal(good.media.srtp?.local, local.sdes.keys[1]);
    assert.equal(answer('RTP/SAVP', `2 AES_CM_128_HMAC_SHA1_80 ${INLINE}`).ok, false, 'tag 2 was the 32-bit suite');
    assert.equal(answer('RTP/SAVP', `7 AES_CM_128_HMAC_SHA1_80 ${INLINE}`).ok, false, 'no such tag offered');
    assert.equal(answer('RTP/AVP').ok, false, 'mandatory SDES answered in the clear');
  });

  test('optimistic: an answer without crypto is plain RTP; with crypto it is SRTP', () => {
    const local = withSdes(true);
    const plain = acceptAnswer(offer('RTP/AVP'), local);
    assert.ok(plain.ok);
    assert.equal(plain.media.srtp, undefined);
    const secure = acceptAnswer(offer('RTP/AVP', `1 AES_CM_128_HMAC_SHA1_80 ${INLINE}`), local);
    assert.ok(secure.ok);
    assert.equal(secure.media.srtp?.tag, 1);
    assert.equal(acceptAnswer(offer('RTP/SAVP', `1 AES_CM_128_HMAC_SHA1_80 ${INLINE}`), LOCAL).ok, false, 'RTP/SAVP answer to a plain offer');
  });
});
