// A server-to-client WebSocket text frame (RFC 6455 §5.2: FIN, opcode 1, unmasked) built as one
// buffer. The event WebSocket writes its events this way: handing a string to `ws` made, per event
// and per client, two option objects, a header buffer and two socket writes.

/** Bytes of a frame header for a payload of `length` bytes. */
function headerLength(length: number): number {
  return length < 126 ? 2 : length < 65536 ? 4 : 10;
}

/** A frame of a `length`-byte text payload, its header written, the payload's bytes still to write at `headerLength(length)`. */
function textFrameFor(length: number): Buffer {
  const frame = Buffer.allocUnsafe(headerLength(length) + length);
  frame[0] = 0x81; // FIN + text
  if (length < 126) {
    frame[1] = length;
  } else if (length < 65536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    // Payloads here are bounded far below 2^32 bytes (the JSON of one event).
    frame.writeUInt32BE(0, 2);
    frame.writeUInt32BE(length, 6);
  }
  return frame;
}

/** The whole frame carrying `text` (UTF-8): one allocation, written with one call. */
export function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const frame = textFrameFor(length);
  frame.write(text, headerLength(length), 'utf8');
  return frame;
}

/** Decimal digits of a non-negative safe integer. */
function digitsOf(value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  return digits;
}

/** UTF-8 bytes of a JSON object's text of `bodyBytes` with `fieldsBytes` of fields and the decimal `sequence` put before its closing brace. */
export function splicedLength(bodyBytes: number, fieldsBytes: number, sequence: number): number {
  return bodyBytes - 1 + fieldsBytes + digitsOf(sequence) + 1;
}

/**
 * The frame carrying `body` + `tail` (a JSON object's text; `tail` may be '') with `fields` and
 * the decimal `sequence` put before its closing brace, written part by part: joining the strings
 * first made one string per frame, which writing then flattened into another. `bodyBytes` (body
 * and tail) and `fieldsBytes` are the parts' UTF-8 lengths (the caller knows them). The digits are
 * written without making a string.
 */
export function splicedTextFrame(body: string, tail: string, bodyBytes: number, fields: string, fieldsBytes: number, sequence: number): Buffer {
  const length = splicedLength(bodyBytes, fieldsBytes, sequence);
  const offset = headerLength(length);
  const frame = textFrameFor(length);
  // The text's closing brace is overwritten by the fields, and written again at the end.
  let at = offset + frame.write(body, offset, 'utf8');
  if (tail !== '') at += frame.write(tail, at, 'utf8');
  at--;
  at += frame.write(fields, at, 'utf8');
  const digits = digitsOf(sequence);
  for (let i = digits - 1, rest = sequence; i >= 0; i--, rest = Math.floor(rest / 10)) frame[at + i] = 0x30 + (rest % 10);
  frame[at + digits] = 0x7d; // }
  return frame;
}
