import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textFrame } from '../../src/util/websocket-text-frame.ts';

/** Reads a server frame back (RFC 6455 §5.2): FIN, opcode, mask bit, payload. */
function read(frame: Buffer): { fin: boolean; opcode: number; masked: boolean; text: string } {
  const fin = (frame[0]! & 0x80) !== 0;
  const opcode = frame[0]! & 0x0f;
  const masked = (frame[1]! & 0x80) !== 0;
  let length = frame[1]! & 0x7f;
  let offset = 2;
  if (length === 126) {
    length = frame.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    length = frame.readUInt32BE(6);
    offset = 10;
  }
  assert.equal(frame.length, offset + length);
  return { fin, opcode, masked, text: frame.subarray(offset).toString('utf8') };
}

test('text frames of every header size carry their UTF-8 payload unmasked', () => {
  for (const text of ['', '{}', 'x'.repeat(125), 'é'.repeat(63), 'y'.repeat(126), 'z'.repeat(65535), '€'.repeat(30000)]) {
    const frame = read(textFrame(text));
    assert.deepEqual(frame, { fin: true, opcode: 1, masked: false, text });
  }
});
