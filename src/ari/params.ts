// Parameter parsing and validation, driven entirely by the operation's declaration.
// Sources, in rising precedence: form body, query string, JSON body (top-level keys).
import { splitArgs } from '../dialplan/args.ts';
import { AriError } from './handler.ts';
import type { OperationDecl, ParamDecl } from '../spec/types.ts';

/** Asterisk refuses lists of this many values or more. */
export const MAX_LIST_VALUES = 128;

/** Ids (`channelId`, `playbackId`, ...) travel in paths and Location headers: keep them short. */
export const MAX_ID_LENGTH = 256;
/** Path parameters that are names (`recordingName`, `logChannelName`, ...). */
export const MAX_NAME_LENGTH = 1024;
/** Any other string parameter (message bodies, media URIs, dial strings ...). */
export const MAX_STRING_LENGTH = 65_536;
const ID_NAME = /(?:Id|^id)$/;
// C0 controls and DEL: never part of an id or a name.
const CONTROL = /[\u0000-\u001f\u007f]/;

const TRUE_WORDS = new Set(['yes', 'true', 'y', 't', '1', 'on']);
const FALSE_WORDS = new Set(['no', 'false', 'n', 'f', '0', 'off']);
const INTEGER = /^[+-]?\d+$/;

export interface RawRequestParams {
  readonly pathParams: Readonly<Record<string, string>>;
  /** The query string; the last occurrence of a key wins, as in Asterisk. */
  readonly query: URLSearchParams;
  /** Form-urlencoded body values (the query string wins over these). */
  readonly form?: ReadonlyMap<string, string>;
  /** A parsed JSON body, when the request carried one. */
  readonly json?: unknown;
}

const bad = (message: string): AriError => new AriError(400, message);

function parseScalar(decl: ParamDecl, raw: unknown): unknown {
  const name = decl.name;
  switch (decl.dataType) {
    case 'int':
    case 'long': {
      if (typeof raw === 'number') {
        if (!Number.isInteger(raw)) throw bad(`${name}: must be an integer`);
        return raw;
      }
      if (typeof raw === 'string' && INTEGER.test(raw.trim())) return Number.parseInt(raw, 10);
      throw bad(`${name}: must be an integer`);
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      const word = String(raw).trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return true;
      if (FALSE_WORDS.has(word)) return false;
      throw bad(`${name}: must be a boolean (true or false)`);
    }
    case 'containers':
      // A JSON container: an object (variables) or a list (dynamic configuration `fields`).
      if (raw === null || typeof raw !== 'object') throw bad(`${name}: must be a JSON object or list`);
      return raw;
    case 'object':
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw bad(`${name}: must be a JSON object`);
      return raw;
    default: {
      if (raw === null || typeof raw === 'object') throw bad(`${name}: must be a string`);
      return checkText(decl, String(raw));
    }
  }
}

/**
 * Every string a request hands the core is bounded and well-formed, before anything acts on it:
 * a lone surrogate cannot be percent-encoded into a Location header or a file name, and ids and
 * names end up in both.
 */
function checkText(decl: ParamDecl, text: string): string {
  const isId = ID_NAME.test(decl.name);
  const limit = isId ? MAX_ID_LENGTH : decl.in === 'path' ? MAX_NAME_LENGTH : MAX_STRING_LENGTH;
  if (text.length > limit) throw bad(`${decl.name}: longer than ${limit} characters`);
  if (!text.isWellFormed()) throw bad(`${decl.name}: not valid Unicode text (lone surrogate)`);
  if (isId && CONTROL.test(text)) throw bad(`${decl.name}: control characters are not allowed`);
  return text;
}

function checkAllowed(decl: ParamDecl, value: unknown): unknown {
  if (decl.allowedValues && typeof value === 'string') {
    const match = decl.caseInsensitive
      ? decl.allowedValues.find((allowed) => allowed.toLowerCase() === value.toLowerCase())
      : decl.allowedValues.find((allowed) => allowed === value);
    if (match === undefined) {
      throw bad(`Invalid value for ${decl.name}: "${value}"; allowed values: ${decl.allowedValues.join(', ')}`);
    }
    return match;
  }
  if (decl.range && typeof value === 'number') {
    const { min, max } = decl.range;
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
      const bounds = [min !== undefined ? `>= ${min}` : '', max !== undefined ? `<= ${max}` : ''].filter(Boolean).join(' and ');
      throw bad(`Invalid value for ${decl.name}: ${value}; must be ${bounds}`);
    }
  }
  return value;
}

function parseList(decl: ParamDecl, raw: unknown): unknown[] {
  let items: unknown[];
  if (Array.isArray(raw)) items = raw;
  else if (typeof raw === 'string') items = splitArgs(raw);
  else items = [raw];
  if (items.length >= MAX_LIST_VALUES) throw bad(`Too many values for ${decl.name}`);
  return items.map((item) => checkAllowed(decl, parseScalar(decl, item)));
}

/** The value under the parameter's own name, else under its first alias that has one. */
function valueOf(decl: ParamDecl, values: ReadonlyMap<string, string>): string | undefined {
  const own = values.get(decl.name);
  if (own !== undefined || !decl.aliases) return own;
  for (const alias of decl.aliases) {
    const value = values.get(alias);
    if (value !== undefined) return value;
  }
  return undefined;
}

function jsonValueOf(decl: ParamDecl, json: Record<string, unknown>): unknown {
  const own = json[decl.name];
  if (own !== undefined || !decl.aliases) return own;
  for (const alias of decl.aliases) if (json[alias] !== undefined) return json[alias];
  return undefined;
}

/**
 * The query string's last value of each key (the last occurrence wins, as in Asterisk), made once
 * per request: looking every declared name up with getAll() made an array per name.
 */
function lastValues(query: URLSearchParams): ReadonlyMap<string, string> {
  const values = new Map<string, string>();
  for (const [key, value] of query) values.set(key, value);
  return values;
}

function findRaw(decl: ParamDecl, raw: RawRequestParams, jsonObject: Record<string, unknown> | undefined, query: ReadonlyMap<string, string> | undefined): unknown {
  if (decl.in === 'path') return raw.pathParams[decl.name];
  if (decl.in === 'body') {
    // An `object` body parameter is the whole body (eventFilter); `containers` is one key of it.
    if (decl.dataType === 'object') return jsonObject;
    return jsonObject?.[decl.name];
  }
  const fromJson = jsonObject ? jsonValueOf(decl, jsonObject) : undefined;
  if (fromJson !== undefined) return fromJson;
  const fromQuery = query ? valueOf(decl, query) : undefined;
  if (fromQuery !== undefined) return fromQuery;
  return raw.form ? valueOf(decl, raw.form) : undefined;
}

/** Parses and validates every declared parameter; throws AriError(400) naming the parameter on bad input. */
export function parseParams(operation: OperationDecl, raw: RawRequestParams): Record<string, unknown> {
  if (operation.params.length === 0) return {};
  const jsonObject =
    raw.json !== null && typeof raw.json === 'object' && !Array.isArray(raw.json) ? (raw.json as Record<string, unknown>) : undefined;
  const query = raw.query.size > 0 ? lastValues(raw.query) : undefined;
  const result: Record<string, unknown> = {};
  for (const decl of operation.params) {
    let value = findRaw(decl, raw, jsonObject, query);
    // An empty value of a non-string or list parameter means "not given".
    const missing =
      value === undefined || value === null || (value === '' && (decl.dataType !== 'string' || decl.allowMultiple === true) && decl.in !== 'path');
    if (missing || (value === '' && decl.required && decl.in !== 'path')) {
      if (decl.required) throw bad(`Missing required parameter: ${decl.name}`);
      if (decl.defaultValue !== undefined) {
        result[decl.name] = decl.allowMultiple ? [decl.defaultValue] : decl.defaultValue;
      }
      continue;
    }
    value = decl.allowMultiple ? parseList(decl, value) : checkAllowed(decl, parseScalar(decl, value));
    result[decl.name] = value;
  }
  return result;
}
