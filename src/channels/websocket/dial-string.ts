// The resource of a WebSocket dial string: `<connection>[/<options>]`, where the connection is
// `INCOMING` (the application connects to /media/<id>) or the name of a `websocket_clients` entry
// (Patchbay connects to it), and the options are chan_websocket's letters:
//   c(<format>)  the media format (else the requester's first format, else ulaw)
//   n            no automatic answer once connected (the application sends ANSWER)
//   v(k=v,...)   query parameters added to the client's URI (already URL-encoded; client mode only)
//   p            passthrough: each binary message is one frame
//   f(plain-text|json)  control message format (a bad value falls back to plain-text, as Asterisk)
//   d(both|in|out)      media direction from the application's point of view
// Letters Asterisk does not know are ignored, as its option parser does.
import { InvalidError } from '../../core/errors.ts';

export const INCOMING = 'INCOMING';

export type MediaDirection = 'both' | 'in' | 'out';
export type ControlFormat = 'plain-text' | 'json';

export interface WebSocketDialString {
  /** `INCOMING` or a websocket_clients name, as dialled. */
  readonly connection: string;
  readonly incoming: boolean;
  readonly format: string | undefined;
  readonly autoAnswer: boolean;
  /** `name=value` pairs for the URI (client mode). */
  readonly uriParams: readonly string[];
  readonly passthrough: boolean;
  /** Undefined when not given (the configured default applies). */
  readonly controlFormat: ControlFormat | undefined;
  /** True when f() named something else (logged, plain-text used). */
  readonly badControlFormat: boolean;
  readonly direction: MediaDirection;
}

/** The longest resource read: dial strings come from requests. */
const MAX_RESOURCE_LENGTH = 2048;
const CONNECTION = /^[A-Za-z0-9_.-]{1,64}$/;
/** One URL-encoded query parameter: unreserved characters and %XX escapes only. */
const URI_PARAM = /^(?:[A-Za-z0-9._~+-]|%[0-9A-Fa-f]{2})+=(?:[A-Za-z0-9._~+-]|%[0-9A-Fa-f]{2})*$/;

export function parseDialString(resource: string): WebSocketDialString {
  if (resource.length > MAX_RESOURCE_LENGTH) throw new InvalidError(`WebSocket dial string is longer than ${MAX_RESOURCE_LENGTH} characters`);
  const slash = resource.indexOf('/');
  const connection = slash < 0 ? resource : resource.slice(0, slash);
  const optionText = slash < 0 ? '' : resource.slice(slash + 1);
  if (!CONNECTION.test(connection)) throw new InvalidError(`Invalid WebSocket connection id '${connection}': INCOMING or a websocket_clients name`);
  const incoming = connection === INCOMING;
  let format: string | undefined;
  let autoAnswer = true;
  let uriParams: string[] = [];
  let passthrough = false;
  let controlFormat: ControlFormat | undefined;
  let badControlFormat = false;
  let direction: MediaDirection = 'both';
  for (let i = 0; i < optionText.length; i++) {
    const letter = optionText[i];
    let argument: string | undefined;
    if (optionText[i + 1] === '(') {
      const close = optionText.indexOf(')', i + 2);
      if (close < 0) throw new InvalidError(`WebSocket dial option ${letter}( is not closed`);
      argument = optionText.slice(i + 2, close);
      i = close;
    }
    switch (letter) {
      case 'c':
        if (!argument) throw new InvalidError('WebSocket dial option c() needs a format');
        format = argument;
        break;
      case 'n':
        autoAnswer = false;
        break;
      case 'p':
        passthrough = true;
        break;
      case 'v':
        if (incoming) throw new InvalidError('WebSocket dial option v() is not allowed with INCOMING');
        uriParams = (argument ?? '').split(',').filter((pair) => pair !== '');
        for (const pair of uriParams) {
          if (!URI_PARAM.test(pair)) throw new InvalidError(`WebSocket URI parameter '${pair}' must be name=value, URL-encoded`);
        }
        break;
      case 'f':
        if (argument === 'plain-text' || argument === 'json') controlFormat = argument;
        else {
          controlFormat = 'plain-text';
          badControlFormat = true;
        }
        break;
      case 'd':
        if (argument !== 'both' && argument !== 'in' && argument !== 'out') throw new InvalidError(`Invalid WebSocket media direction '${argument ?? ''}': both, in or out`);
        direction = argument;
        break;
      default:
        break;
    }
  }
  return { connection, incoming, format, autoAnswer, uriParams, passthrough, controlFormat, badControlFormat, direction };
}
