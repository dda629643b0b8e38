// Buffers that own exactly their bytes. Buffer.from(string) and Buffer.from(buffer) of fewer than
// 4 KiB take a slice of Node's shared 8 KiB pool: whatever keeps that small Buffer keeps the whole
// 8 KiB slab alive. A SIP message body kept for a call's life (the INVITE's SDP, the answer we
// sent) pinned one slab per call — 6 KiB a call beyond its bytes (docs/performance.md, "Memory
// per call (stop 36)"). These copy into an ArrayBuffer of their own instead: one allocation, as
// before, sized to the bytes. For bytes that live long, not for a packet's path.

/** A copy of `bytes` in a buffer of its own. */
export function ownedCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

/** `text` in UTF-8, in a buffer of its own. */
export function ownedUtf8(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  bytes.write(text, 0, 'utf8');
  return bytes;
}
