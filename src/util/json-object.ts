// A JSON object that came from elsewhere (a cluster member's message or bucket value): parsed from
// its UTF-8 bytes, or refused with the reason when it is not JSON or not an object. Arrays are
// refused too: every such message is an object whose fields are then read, and checked, by name.
// Bounding the bytes first is the caller's (each message has its own limit).

/** Why bytes are not a JSON object. */
export type NotJsonObject = 'not JSON' | 'not an object';

export function parseJsonObject(data: Uint8Array): Record<string, unknown> | NotJsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  } catch {
    return 'not JSON';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'not an object';
  return parsed as Record<string, unknown>;
}
