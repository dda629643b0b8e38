// PJSIP_PARSE_URI(uri,type) and PJSIP_PARSE_URI_FROM(variable,type) (chan_pjsip, Asterisk 22):
// one part of a SIP URI or name-addr. The _FROM form reads the URI from a channel variable, so a
// URI with commas or quotes need not pass through the argument splitter. The text is the dialplan's,
// hostile: it is bounded (sip/uri.ts) and a URI that does not parse, or is not sip:/sips:, fails the
// read as Asterisk's "Failed to parse URI".
import type { TechnologyFunction, TechnologyFunctionCall } from '../../core/channels/technology.ts';
import { InvalidError } from '../../core/errors.ts';
import { splitArgs } from '../../dialplan/args.ts';
import { MAX_URI_LENGTH, parseNameAddr, parseUri, type SipUri } from '../../sip/uri.ts';

const DOCS_SECTION = 'PJSIP objects';

/** The part `type` of `text` (a name-addr or a URI); undefined when it does not parse or the type is unknown. */
export function uriPart(text: string, type: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_URI_LENGTH) return undefined;
  // As pjsip parses "as name-addr": with angle brackets a display name may come first; without, the
  // whole text is the URI, its parameters the URI's.
  let display = '';
  let uri: SipUri;
  if (trimmed.includes('<')) {
    const nameAddr = parseNameAddr(trimmed);
    if (!nameAddr || nameAddr.uri.kind !== 'sip') return undefined;
    display = nameAddr.displayName ?? '';
    uri = nameAddr.uri;
  } else {
    const parsed = parseUri(trimmed);
    if (!parsed || parsed.kind !== 'sip') return undefined;
    uri = parsed;
  }
  const param = (name: string): string => uri.params.get(name) ?? '';
  switch (type) {
    case 'scheme':
      return uri.scheme;
    case 'display':
      return display;
    case 'user':
      return uri.user ?? '';
    case 'passwd':
      return uri.password ?? '';
    case 'host':
      return uri.host;
    case 'port':
      // pjsip's 0 for a URI that names no port.
      return String(uri.port ?? 0);
    case 'user_param':
      return param('user');
    case 'method_param':
      return param('method');
    case 'transport_param':
      return param('transport');
    case 'ttl_param': {
      // pjsip's -1 for no ttl.
      const ttl = Number.parseInt(param('ttl'), 10);
      return String(Number.isFinite(ttl) ? ttl : -1);
    }
    case 'lr_param':
      return uri.params.has('lr') ? '1' : '0';
    case 'maddr_param':
      return param('maddr');
    default:
      return undefined;
  }
}

const TYPES = 'scheme, display, user, passwd, host, port, user_param, method_param, transport_param, ttl_param, lr_param, maddr_param';

function parseUriRead(fn: 'PJSIP_PARSE_URI' | 'PJSIP_PARSE_URI_FROM', call: TechnologyFunctionCall): string {
  // The type is the last argument: a URI given inline keeps its own commas only when quoted.
  const [first = '', type = ''] = splitArgs(call.args, ',', 2).map((part) => part.trim());
  let uri = first;
  if (fn === 'PJSIP_PARSE_URI_FROM') {
    if (first === '') throw new InvalidError(`The name of a variable containing a URI must be specified when using the '${fn}' dialplan function`);
    uri = call.channel?.getVariable(first) ?? '';
    if (uri === '') throw new InvalidError(`The variable provided to the '${fn}' dialplan function must contain a URI`);
  } else if (uri === '') throw new InvalidError(`A URI must be specified when using the '${fn}' dialplan function`);
  if (type === '') throw new InvalidError(`A type part of the URI must be specified when using the '${fn}' dialplan function`);
  const part = uriPart(uri, type);
  if (part === undefined) throw new InvalidError(uriPart(uri, 'scheme') === undefined ? `Failed to parse URI '${uri.slice(0, 128)}'` : `Unknown type part '${type.slice(0, 32)}' specified`);
  return part;
}

export const uriFunctions: readonly TechnologyFunction[] = [
  {
    name: 'PJSIP_PARSE_URI',
    syntax: 'PJSIP_PARSE_URI(uri,type)',
    summary: `One part of a sip:/sips: URI or name-addr: ${TYPES}.`,
    docsSection: DOCS_SECTION,
    read: (call) => parseUriRead('PJSIP_PARSE_URI', call),
  },
  {
    name: 'PJSIP_PARSE_URI_FROM',
    syntax: 'PJSIP_PARSE_URI_FROM(variable,type)',
    summary: 'As PJSIP_PARSE_URI, the URI read from a channel variable (its commas and quotes need no escaping).',
    docsSection: DOCS_SECTION,
    read: (call) => parseUriRead('PJSIP_PARSE_URI_FROM', call),
  },
];
