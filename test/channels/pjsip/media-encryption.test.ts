// pjsip.conf's media encryption options as Asterisk reads them: media_encryption (no, sdes; dtls
// read and warned about until DTLS-SRTP lands), media_encryption_optimistic, srtp_tag_32.
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

test('media_encryption=dtls is warned about (not implemented yet); another value is an error', () => {
  const dtls = loadPjsipConf(endpoint('media_encryption=dtls'), 'pjsip.conf');
  assert.ok(dtls.warnings.some((line) => /pjsip\.conf:4: .*media_encryption=dtls is not implemented/.test(line)), dtls.warnings.join('\n'));
  const bad = loadPjsipConf(endpoint('media_encryption=zrtp'), 'pjsip.conf');
  assert.ok(bad.errors.some((line) => /zrtp/.test(line)), bad.errors.join('\n'));
});
