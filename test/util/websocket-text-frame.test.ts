import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splicedLength, splicedTextFrame, textFrame } from '../../src/util/websocket-text-frame.ts';

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

test('a spliced frame carries the body with the fields and the sequence before its closing brace, of every header size', () => {
  const fields = ',"application":"app-é","asterisk_id":"02:00:00:00:00:01","sequence":';
  const fieldsBytes = Buffer.byteLength(fields);
  for (const body of ['{"a":1}', `{"t":"${'x'.repeat(40)}"}`, `{"t":"${'y'.repeat(120)}"}`, `{"t":"${'€'.repeat(21000)}"}`, `{"t":"${'z'.repeat(65500)}"}`]) {
    for (const sequence of [0, 7, 9, 10, 99, 100, 123456789, Number.MAX_SAFE_INTEGER]) {
      const expected = `${body.slice(0, -1)}${fields}${sequence}}`;
      const bodyBytes = Buffer.byteLength(body);
      assert.equal(splicedLength(bodyBytes, fieldsBytes, sequence), Buffer.byteLength(expected));
      assert.deepEqual(read(splicedTextFrame(body, '', bodyBytes, fields, fieldsBytes, sequence)), { fin: true, opcode: 1, masked: false, text: expected });
      // The same text in two parts (a kept channel snapshot's tail), split anywhere.
      for (const cut of [1, body.length >> 1, body.length - 1]) {
        const frame = splicedTextFrame(body.slice(0, cut), body.slice(cut), bodyBytes, fields, fieldsBytes, sequence);
        assert.deepEqual(read(frame), { fin: true, opcode: 1, masked: false, text: expected });
      }
    }
  }
});
