// A server-to-client WebSocket text frame (RFC 6455 §5.2: FIN, opcode 1, unmasked) built as one
// buffer. The event WebSocket writes its events this way: handing a string to `ws` made, per event
// and per client, two option objects, a header buffer and two socket writes.

/** Bytes of a frame header for a payload of `length` bytes. */
function headerLength(length: number): number {
  return length < 126 ? 2 : length < 65536 ? 4 : 10;
}

/** The whole frame carrying `text` (UTF-8): one allocation, written with one call. */
export function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const offset = headerLength(length);
  const frame = Buffer.allocUnsafe(offset + length);
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
  frame.write(text, offset, 'utf8');
  return frame;
}
