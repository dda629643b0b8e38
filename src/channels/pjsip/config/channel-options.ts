// The endpoint options that give each channel of the endpoint something of its own as chan_pjsip
// makes it (set_var, accountcode, callerid_tag), those that bound what its channels may do
// (device_state_busy_at, allow_transfer), and what its calls say of it (moh_suggest in its hold,
// user_eq_phone on our INVITE's URIs). Kept beside declarations.ts so that the endpoint's other
// rows stay as they were.
import { bool, custom, int, optional, parsed } from './options.ts';
import { shown, type Parsed } from './values.ts';

/** One `set_var=NAME=value`: the variable set on every channel of the endpoint as it is made. */
export interface EndpointChannelVar {
  readonly name: string;
  readonly value: string;
}

export interface ChannelEndpointOptions {
  /** set_var, in the order first written; a name written again keeps its place and takes the new value (as Asterisk's list). */
  readonly channelVars: readonly EndpointChannelVar[];
  readonly accountcode?: string;
  readonly callerIdTag?: string;
  /** device_state_busy_at: the endpoint's device is BUSY once it has this many channels (0: never). */
  readonly deviceStateBusyAt: number;
  /** allow_transfer: a REFER from the endpoint is taken (no: answered 603). */
  readonly allowTransfer: boolean;
  /** moh_suggest: the music class the endpoint's hold suggests (`default`). */
  readonly mohSuggest: string;
  /** user_eq_phone: `;user=phone` on our INVITE's Request-URI, To and From whose user is a number. */
  readonly userEqPhone: boolean;
}

export const CHANNEL_DEFAULTS: ChannelEndpointOptions = {
  channelVars: [],
  deviceStateBusyAt: 0,
  allowTransfer: true,
  userEqPhone: false,
  mohSuggest: 'default',
};

/** Most set_var lines an endpoint keeps. */
export const MAX_CHANNEL_VARS = 64;
/** Asterisk decodes a set_var value into 512 bytes (its terminator included): the rest is cut. */
const MAX_VAR_VALUE = 511;
/** Asterisk's CDR keeps an accountcode in AST_MAX_ACCOUNT_CODE (80) bytes. */
const MAX_ACCOUNTCODE = 79;
const MAX_TAG = 255;
/** A variable name: what the dialplan can name (`_`/`__` inheritance prefixes included). */
const VARIABLE_NAME = /^[A-Za-z0-9_.-]{1,80}$/;

/**
 * The value's backslash escapes decoded as Asterisk's ast_get_encoded_str does (\n \r \t, \xHH,
 * \0 followed by octal digits, any other escaped character itself), bounded to MAX_VAR_VALUE.
 */
export function decodeEscapes(text: string): string {
  let out = '';
  for (let i = 0; i < text.length && out.length < MAX_VAR_VALUE; i++) {
    const char = text[i];
    if (char !== '\\' || i + 1 >= text.length) {
      out += char;
      continue;
    }
    const next = text[++i];
    if (next === 'n') out += '\n';
    else if (next === 'r') out += '\r';
    else if (next === 't') out += '\t';
    else if (next === 'x') {
      const hex = /^[0-9A-Fa-f]{1,2}/.exec(text.slice(i + 1, i + 3))?.[0] ?? '';
      out += String.fromCharCode(parseInt(hex || '0', 16));
      i += hex.length;
    } else if (next === '0') {
      const octal = /^[0-7]*/.exec(text.slice(i + 1, i + 4))?.[0] ?? '';
      out += String.fromCharCode(parseInt(octal || '0', 8) & 0xff);
      i += octal.length;
    } else out += next;
  }
  return out;
}

/**
 * The `NAME=value` items of one set_var value. Patchbay keeps an object's repeated list lines as one
 * comma-joined value (objects.ts), so a comma starts another item, unless it is escaped (`\,`, which
 * decodes to a comma as in Asterisk) or what follows holds no `=` (`FOO=a,b` is one item, `a,b`).
 */
function setVarItems(value: string): string[] {
  const items: string[] = [];
  let start = 0;
  const push = (text: string) => {
    if (text.trim() === '') return;
    if (items.length > 0 && !text.includes('=')) items[items.length - 1] += `,${text}`;
    else items.push(text.trim());
  };
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\') i++;
    else if (value[i] === ',') {
      push(value.slice(start, i));
      start = i + 1;
    }
  }
  push(value.slice(start));
  return items;
}

/** A bounded free text whose empty value unsets (Asterisk's empty string fields). */
const boundedText = (max: number) => (value: string): Parsed<string> => {
  const text = value.trim();
  // eslint-disable-next-line no-control-regex
  if (text.length > max || /[\x00-\x1f\x7f]/.test(text)) return { ok: false, error: `${shown(value)} is not up to ${max} printable characters` };
  return { ok: true, value: text };
};

type Draft = { channelVars: readonly EndpointChannelVar[] };

export const CHANNEL_ENDPOINT_OPTIONS = {
  set_var: custom<Draft>(
    { list: true, doc: 'A channel variable (`NAME=value`; `_NAME`/`__NAME` inherited by the channels it dials, as any variable) set on every channel of the endpoint as it is made, in and out; one per line, a name written again takes the new value; the value\'s backslash escapes (\\n, \\t, \\xHH…) are decoded as Asterisk does. A comma starts another `NAME=value` unless escaped (`\\,`) or followed by no `=`.' },
    (draft, value, report) => {
      // Asterisk ignores an empty set_var and refuses one without `=`; the value is all after the first `=`.
      let vars = draft.channelVars;
      for (const item of setVarItems(value)) {
        const equals = item.indexOf('=');
        const name = equals < 0 ? '' : item.slice(0, equals).trim();
        if (equals < 0 || !VARIABLE_NAME.test(name)) return report.fail(`${shown(item)} is not NAME=value (a name of letters, digits, _ . -, up to 80)`);
        const variable = { name, value: decodeEscapes(item.slice(equals + 1)) };
        const at = vars.findIndex((known) => known.name === name);
        if (at >= 0) vars = vars.map((known, index) => (index === at ? variable : known));
        else if (vars.length >= MAX_CHANNEL_VARS) return report.fail(`more than ${MAX_CHANNEL_VARS} set_var lines`);
        else vars = [...vars, variable];
      }
      draft.channelVars = vars;
    },
  ),
  accountcode: optional('accountcode', boundedText(MAX_ACCOUNTCODE), { doc: 'The account code of every channel of the endpoint as it is made: CHANNEL(accountcode), ARI\'s `accountcode`, the CDR\'s and CEL\'s.' }),
  callerid_tag: optional('callerIdTag', boundedText(MAX_TAG), { doc: 'CALLERID(tag) of the endpoint\'s channels as they are made (sent to no peer).' }),
  device_state_busy_at: int('deviceStateBusyAt', 0, 100_000, { default: '0', doc: 'The endpoint\'s device state is BUSY once this many of its channels are in use (any state but Down), whatever their states: DEVICE_STATE(PJSIP/<id>), hints, DeviceStateChanged; 0: never.' }),
  moh_suggest: parsed('mohSuggest', (value) => boundedText(MAX_TAG)(value.trim() === '' ? 'default' : value), { default: 'default', doc: 'The music class the endpoint\'s hold (a sendonly, inactive or no-address offer) suggests: ChannelHold\'s `musicclass` (empty: `default`).' }),
  user_eq_phone: bool('userEqPhone', { default: 'no', doc: 'Our INVITEs to the endpoint carry `;user=phone` on the Request-URI, To and From whose user is a telephone number (an optional `+`, then only 0-9 # * A-D).' }),
  allow_transfer: bool('allowTransfer', { default: 'yes', doc: 'A REFER (blind or attended transfer) from the endpoint is taken; no: it is answered 603 Decline and nothing else happens to the call.' }),
};
