// Bodies kept for a call's life own their bytes: no slice of Node's shared 8 KiB pool (which the
// slice would keep alive whole).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ownedCopy, ownedUtf8 } from '../../src/util/owned-buffer.ts';
import { SipResponse } from '../../src/sip/message.ts';
import { parseMessage } from '../../src/sip/parser.ts';
import { INVITE } from '../sip/samples.ts';

test('copies and UTF-8 text in buffers of their own, byte for byte', () => {
  const source = Buffer.from('v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\n');
  assert.ok(source.buffer.byteLength > source.length, 'Buffer.from of a short text is a pool slice (the case this is for)');
  const copy = ownedCopy(source);
  assert.deepEqual(copy, source);
  assert.equal(copy.buffer.byteLength, source.length);
  const text = 'v=0\r\ns=Patchbay — ü\r\n';
  const utf8 = ownedUtf8(text);
  assert.equal(utf8.toString('utf8'), text);
  assert.equal(utf8.buffer.byteLength, Buffer.byteLength(text));
  assert.equal(ownedUtf8('').length, 0);
});

test('a parsed INVITE\'s body and a response\'s text body own their bytes', () => {
  const parsed = parseMessage(Buffer.from(INVITE));
  assert.ok(parsed.ok);
  const body = parsed.message.body!;
  assert.ok(body.length > 0);
  assert.equal(body.buffer.byteLength, body.length);
  const response = new SipResponse(200, 'OK', [], 'v=0\r\n');
  assert.equal(response.body!.buffer.byteLength, 5);
});
