// pjsip.conf's media encryption options as Asterisk reads them: media_encryption (no, sdes, dtls:
// DTLS-SRTP, warned about without ice_support), media_encryption_optimistic, srtp_tag_32.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadPjsipConf } from '../../../src/channels/pjsip/config/index.ts';

const endpoint = (lines: string) => `[alice]\ntype=endpoint\nallow=ulaw\n${lines}\n`;

test('media_encryption, media_encryption_optimistic and srtp_tag_32 are read; defaults are no', () => {
  const plain = loadPjsipConf(endpoint(''), 'pjsip.conf');
  const alice = plain.config.endpoints.get('alice');
  assert.equal(alice?.mediaEncryption, 'no');
  assert.equal(alice?.mediaEncryptionOptimistic, false);
  assert.equal(alice?.srtpTag32, false);
  const secure = loadPjsipConf(endpoint('media_encryption=SDES\nmedia_encryption_optimistic=yes\nsrtp_tag_32=yes'), 'pjsip.conf');
  const bob = secure.config.endpoints.get('alice');
  assert.deepEqual([bob?.mediaEncryption, bob?.mediaEncryptionOptimistic, bob?.srtpTag32], ['sdes', true, true]);
  assert.deepEqual(secure.errors, []);
  assert.deepEqual(secure.warnings, []);
});

test('media_encryption=dtls without ice_support is warned about (DTLS-SRTP goes only to a pair ICE checked); another value is an error', () => {
  const dtls = loadPjsipConf(endpoint('media_encryption=dtls'), 'pjsip.conf');
  assert.ok(dtls.warnings.some((line) => /media_encryption=dtls without ice_support=yes/.test(line)), dtls.warnings.join('\n'));
  const bad = loadPjsipConf(endpoint('media_encryption=zrtp'), 'pjsip.conf');
  assert.ok(bad.errors.some((line) => /zrtp/.test(line)), bad.errors.join('\n'));
});
