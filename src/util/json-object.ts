// A JSON object that came from elsewhere (a cluster member's message or bucket value, a media
// WebSocket's control frame): parsed, or refused with the reason when it is not JSON or not an
// object. Arrays are refused too: every such message is an object whose fields are then read, and
// checked, by name. Bounding the bytes first is the caller's (each message has its own limit).

/**
 * The deepest nesting of arrays and objects a peer's JSON may have: jansson's JSON_PARSER_MAX_DEPTH,
 * past which Asterisk's ARI refuses a body as unparseable. V8's JSON.parse takes about a microsecond
 * per level (a 1 MiB body of brackets blocks the event loop for a second), so the depth is counted
 * first, in one pass that allocates nothing.
 */
export const MAX_JSON_DEPTH = 2048;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether the text nests arrays and objects deeper than `maxDepth` (brackets inside strings do not count). */
export function jsonNestingExceeds(text: string, maxDepth = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** JSON.parse, but undefined for text that is not JSON or nests deeper than MAX_JSON_DEPTH. */
export function parseBoundedJson(text: string): { value: unknown } | undefined {
  if (jsonNestingExceeds(text)) return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** Why bytes are not a JSON object. */
export type NotJsonObject = 'not JSON' | 'not an object';

/** From text already decoded (a bucket value, a header, a TEXT frame). */
export function parseJsonObjectText(text: string): Record<string, unknown> | NotJsonObject {
  const read = parseBoundedJson(text);
  if (read === undefined) return 'not JSON';
  const parsed = read.value;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'not an object';
  return parsed as Record<string, unknown>;
}

/** From its UTF-8 bytes. */
export function parseJsonObject(data: Uint8Array): Record<string, unknown> | NotJsonObject {
  return parseJsonObjectText(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
}
