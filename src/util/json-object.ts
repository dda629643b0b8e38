// A JSON object that came from elsewhere (a cluster member's message or bucket value, a media
// WebSocket's control frame): parsed, or refused with the reason when it is not JSON or not an
// object. Arrays are refused too: every such message is an object whose fields are then read, and
// checked, by name. Bounding the bytes first is the caller's (each message has its own limit).

/** Why bytes are not a JSON object. */
export type NotJsonObject = 'not JSON' | 'not an object';

/** From text already decoded (a bucket value, a header, a TEXT frame). */
export function parseJsonObjectText(text: string): Record<string, unknown> | NotJsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'not an object';
  return parsed as Record<string, unknown>;
}

/** From its UTF-8 bytes. */
export function parseJsonObject(data: Uint8Array): Record<string, unknown> | NotJsonObject {
  return parseJsonObjectText(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
}
