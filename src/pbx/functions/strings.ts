// String functions (func_strings, func_cut, func_base64, func_uri, func_sprintf, func_len): they
// compute from their arguments or from the value of a variable they name.
import { splitArgs } from '../../dialplan/args.ts';
import { BoundedRegexError, boundedSubject, compileBoundedRegex } from '../../util/bounded-regex.ts';
import type { DialplanFunction, FunctionCall } from '../function-services.ts';
import { sprintf } from './sprintf.ts';

/** The value of the variable a function names (CUT(varname,...)): unset reads as empty. */
function variableValue(call: FunctionCall, name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') return '';
  // Without a channel (ARI's /asterisk/variable) the name is a global variable.
  if (!call.channel) return call.services?.globals.get(trimmed) ?? '';
  return call.services?.variable(call.channel, trimmed) ?? call.channel.getVariable(trimmed) ?? '';
}

/** A delimiter argument: `\t`, `\n`, `\,`... escapes as Asterisk reads them; empty means `def`. */
function delimiterOf(text: string | undefined, fallback: string): string {
  if (text === undefined || text === '') return fallback;
  const unescaped = unescape(text);
  return unescaped === '' ? fallback : unescaped;
}

function unescape(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{1,2}|.)/g, (_whole, escape: string) => {
    if (escape[0] === 'x' && escape.length > 1) return String.fromCharCode(Number.parseInt(escape.slice(1), 16));
    switch (escape) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      default:
        return escape;
    }
  });
}

/** Splits on a delimiter that may be several characters long (Asterisk uses its first character). */
function fields(value: string, delimiter: string): string[] {
  return value.split(delimiter[0]);
}

/** CUT answers at most this many fields, however many times a specification repeats them. */
const MAX_PICKED_FIELDS = 65536;
/** FILTER's allowed set stops growing here, however many ranges its specification lists. */
const MAX_ALLOWED_CHARACTERS = 65536;

/** CUT's field specification: `2`, `2-4`, `2-`, `-3`, joined with `&`; undefined when malformed. */
function cut(value: string, delimiter: string, spec: string): string | undefined {
  const parts = fields(value, delimiter);
  const picked: string[] = [];
  for (const item of spec.split('&')) {
    const match = /^\s*(\d*)\s*(-?)\s*(\d*)\s*$/.exec(item);
    if (!match || (match[1] === '' && match[3] === '' && match[2] === '')) return undefined;
    const start = match[1] === '' ? 1 : Number(match[1]);
    const end = match[2] === '' ? start : match[3] === '' ? parts.length : Number(match[3]);
    if (start < 1) return undefined;
    for (let i = start; i <= Math.min(end, parts.length) && picked.length < MAX_PICKED_FIELDS; i++) picked.push(parts[i - 1]);
  }
  return picked.join(delimiter[0]);
}

/** FILTER's allowed set: characters, `a-z` ranges and `\x41` escapes. */
function allowedCharacters(spec: string): Set<number> {
  const chars = [...unescape(spec)].map((c) => c.codePointAt(0)!);
  const allowed = new Set<number>();
  for (let i = 0; i < chars.length; i++) {
    if (chars[i + 1] === 0x2d && i + 2 < chars.length) {
      const from = chars[i];
      const to = chars[i + 2];
      // A range is at most the size of a byte's worth of characters, as Asterisk's unsigned char.
      for (let c = from; c <= to && c - from < 256 && allowed.size < MAX_ALLOWED_CHARACTERS; c++) allowed.add(c);
      i += 2;
    } else {
      allowed.add(chars[i]);
    }
  }
  return allowed;
}

export const stringFunctions: readonly DialplanFunction[] = [
  {
    name: 'LEN',
    syntax: 'LEN(string)',
    summary: 'The length of the string.',
    category: 'string',
    read: ({ args }) => String(args.length),
  },
  {
    name: 'CUT',
    syntax: 'CUT(varname[,delimiter[,fields]])',
    summary: "Fields of a variable's value split on delimiter (default -): 2, 2-4, 2-, -3 or a &-list.",
    category: 'string',
    read(call) {
      const [name = '', delimiter, spec = '1'] = splitArgs(call.args, ',', 3);
      return cut(variableValue(call, name), delimiterOf(delimiter, '-'), spec === '' ? '1' : spec);
    },
  },
  {
    name: 'FIELDQTY',
    syntax: 'FIELDQTY(varname,delimiter)',
    summary: "How many fields a variable's value has when split on delimiter (0 for an empty value).",
    category: 'string',
    read(call) {
      const [name = '', delimiter] = splitArgs(call.args, ',', 2);
      const value = variableValue(call, name);
      return value === '' ? '0' : String(fields(value, delimiterOf(delimiter, '-')).length);
    },
  },
  {
    name: 'FIELDNUM',
    syntax: 'FIELDNUM(varname,delimiter,field)',
    summary: "The 1-based position of field in a variable's delimited value, 0 when absent.",
    category: 'string',
    read(call) {
      const [name = '', delimiter, field = ''] = splitArgs(call.args, ',', 3);
      const value = variableValue(call, name);
      if (value === '' || field === '') return '0';
      return String(fields(value, delimiterOf(delimiter, '-')).indexOf(field) + 1);
    },
  },
  {
    name: 'LISTFILTER',
    syntax: 'LISTFILTER(varname,delimiter,value)',
    summary: "A variable's delimited list without any element equal to value.",
    category: 'string',
    read(call) {
      const [name = '', delimiter, value = ''] = splitArgs(call.args, ',', 3);
      const separator = delimiterOf(delimiter, ',')[0];
      return fields(variableValue(call, name), separator)
        .filter((element) => element !== value)
        .join(separator);
    },
  },
  {
    name: 'REGEX',
    syntax: 'REGEX("regular expression" string)',
    summary: 'Whether string matches the POSIX extended regular expression (1 or 0); run in linear time, patterns capped at 512 characters.',
    category: 'string',
    read({ args }) {
      const open = args.indexOf('"');
      const close = open < 0 ? -1 : args.indexOf('"', open + 1);
      if (close < 0) return undefined;
      let subject = args.slice(close + 1);
      if (subject.startsWith(' ')) subject = subject.slice(1);
      try {
        return compileBoundedRegex(args.slice(open + 1, close)).test(boundedSubject(subject)) ? '1' : '0';
      } catch (error) {
        if (error instanceof BoundedRegexError) return undefined;
        throw error;
      }
    },
  },
  {
    name: 'REPLACE',
    syntax: 'REPLACE(varname,find-chars[,replace-char])',
    summary: "A variable's value with every character of find-chars replaced by replace-char (or removed).",
    category: 'string',
    read(call) {
      const [name = '', find = '', replacement = ''] = splitArgs(call.args, ',', 3);
      if (find === '') return undefined;
      const targets = new Set(unescape(find));
      const by = unescape(replacement).slice(0, 1);
      let out = '';
      for (const c of variableValue(call, name)) out += targets.has(c) ? by : c;
      return out;
    },
  },
  {
    name: 'FILTER',
    syntax: 'FILTER(allowed-chars,string)',
    summary: 'string with only the allowed characters kept (ranges such as 0-9 and escapes such as \\x20 allowed).',
    category: 'string',
    read({ args }) {
      const comma = args.indexOf(',');
      if (comma < 0) return undefined;
      const allowed = allowedCharacters(args.slice(0, comma));
      let out = '';
      for (const c of args.slice(comma + 1)) if (allowed.has(c.codePointAt(0)!)) out += c;
      return out;
    },
  },
  {
    name: 'TOUPPER',
    syntax: 'TOUPPER(string)',
    summary: 'string in upper case.',
    category: 'string',
    read: ({ args }) => args.toUpperCase(),
  },
  {
    name: 'TOLOWER',
    syntax: 'TOLOWER(string)',
    summary: 'string in lower case.',
    category: 'string',
    read: ({ args }) => args.toLowerCase(),
  },
  {
    name: 'SPRINTF',
    syntax: 'SPRINTF(format,arg1[,arg2...])',
    summary: 'printf formatting: %d %i %u %o %x %X %c %s %f %F %e %E %g %G %a %A with flags, width and precision.',
    category: 'string',
    read({ args }) {
      const [format = '', ...values] = splitArgs(args);
      return sprintf(format, values);
    },
  },
  {
    name: 'QUOTE',
    syntax: 'QUOTE(string)',
    summary: 'string in double quotes, with \\ and " escaped by a backslash.',
    category: 'string',
    read: ({ args }) => `"${args.replace(/[\\"]/g, (c) => `\\${c}`)}"`,
  },
  {
    name: 'CSV_QUOTE',
    syntax: 'CSV_QUOTE(string)',
    summary: 'string quoted for a CSV field: in double quotes, inner quotes doubled.',
    category: 'string',
    read: ({ args }) => `"${args.replaceAll('"', '""')}"`,
  },
  {
    name: 'BASE64_ENCODE',
    syntax: 'BASE64_ENCODE(string)',
    summary: 'string (as UTF-8) in base64.',
    category: 'string',
    read: ({ args }) => Buffer.from(args, 'utf8').toString('base64'),
  },
  {
    name: 'BASE64_DECODE',
    syntax: 'BASE64_DECODE(string)',
    summary: 'base64 decoded (to UTF-8 text; the decoding stops at the first NUL byte).',
    category: 'string',
    read({ args }) {
      const bytes = Buffer.from(args, 'base64');
      const nul = bytes.indexOf(0);
      return (nul < 0 ? bytes : bytes.subarray(0, nul)).toString('utf8');
    },
  },
  {
    name: 'URIENCODE',
    syntax: 'URIENCODE(data)',
    summary: 'data percent-encoded for a URI (letters, digits and -_.!~*\'() kept).',
    category: 'string',
    // A lone surrogate (possible in a JSON-given variable) is encoded as UTF-8 would carry it,
    // U+FFFD, rather than making encodeURIComponent throw.
    read: ({ args }) => encodeURIComponent(args.toWellFormed()),
  },
  {
    name: 'URIDECODE',
    syntax: 'URIDECODE(data)',
    summary: 'data with %XX sequences decoded (malformed ones kept as written).',
    category: 'string',
    read: ({ args }) => uriDecode(args),
  },
];

function uriDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // Decode what decodes, leave the rest: a stray `%` must not make the whole value vanish.
    return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}
