// The building blocks of the res_pjsip declarations (declarations.ts): one option is declared once —
// its pjsip.conf name, how its text becomes a typed value, Asterisk's default as ARI shows it,
// whether a repeated key adds to the value or replaces it, whether Patchbay acts on it, and the
// line of docs/sip.md that says so. The pjsip.conf reader, the YAML/ARI objects and the dynamic
// configuration store all read these declarations; nothing else names an option.
import fs from 'node:fs';
import { parseBool, parseInteger, shown, splitList, type Parsed } from './values.ts';

/** The most items a list option keeps; beyond it the value is an error. */
export const MAX_LIST_ITEMS = 256;

/** Where an option's problems go: `fail` makes the object unusable, `warn` is one log line. */
export interface Report {
  fail(message: string): void;
  warn(message: string): void;
}

/** What every option declaration says besides how it is applied. */
export interface OptionInfo {
  /**
   * Whether a repeated key adds to the value (Asterisk's list options: allow/disallow, contact,
   * match, local_net) or replaces it (everything else, templates included: `context=vip` in a
   * section that inherits `context=phones` is `vip`).
   */
  readonly list: boolean;
  /**
   * Whether Patchbay acts on the option. One that is parsed but not implemented is validated
   * like any other, and setting it is a start-up warning naming it, never a silent no-op.
   */
  readonly implemented: boolean;
  /** Asterisk's default as ARI reports it for an unset field (`/asterisk/config/dynamic`). */
  readonly default: string;
  /** One line for docs/sip.md: what Patchbay does with it (Markdown). */
  readonly doc: string;
}

/**
 * One option, typed against the part of the object it writes (`D`): `text('context')` is an
 * `Option<{ context: string }>`, which fits the draft of any object with a string `context`.
 */
export interface Option<D> extends OptionInfo {
  apply(draft: D, value: string, report: Report): void;
}

interface Declared {
  readonly default?: string;
  readonly doc: string;
  /** Default true: only options being worked on say false. */
  readonly implemented?: boolean;
}

const info = (declared: Declared, list = false): OptionInfo => ({
  list,
  implemented: declared.implemented ?? true,
  default: declared.default ?? '',
  doc: declared.doc,
});

/** A value parsed by `parse` into `key`. */
export function parsed<K extends string, T>(key: K, parse: (value: string) => Parsed<T>, declared: Declared): Option<{ [P in K]: T }> {
  return {
    ...info(declared),
    apply(draft, value, report) {
      const result = parse(value);
      if (result.ok) draft[key] = result.value;
      else report.fail(result.error);
    },
  };
}

/** Like `parsed`, but an empty value unsets the field (Asterisk's empty string fields). */
export function optional<K extends string, T>(key: K, parse: (value: string) => Parsed<T>, declared: Declared): Option<{ [P in K]?: T }> {
  return {
    ...info(declared),
    apply(draft, value, report) {
      if (value.trim() === '') {
        delete draft[key];
        return;
      }
      const result = parse(value);
      if (result.ok) draft[key] = result.value;
      else report.fail(result.error);
    },
  };
}

const trimmed = (value: string): Parsed<string> => ({ ok: true, value: value.trim() });

/** Free text, trimmed (an empty value is the empty string). */
export const text = <K extends string>(key: K, declared: Declared) => parsed(key, trimmed, declared);

/** Free text, trimmed; empty unsets. */
export const optionalText = <K extends string>(key: K, declared: Declared) => optional(key, trimmed, declared);

/** A path that must name a readable file when given (Asterisk refuses the option otherwise); empty unsets. */
export const readableFile = <K extends string>(key: K, declared: Declared) =>
  optional(
    key,
    (value): Parsed<string> => {
      const path = value.trim();
      try {
        fs.accessSync(path, fs.constants.R_OK);
        if (fs.statSync(path).isFile()) return { ok: true, value: path };
      } catch {
        // fall through: not readable
      }
      return { ok: false, error: `${shown(path)} is not a readable file` };
    },
    declared,
  );

export const bool = <K extends string>(key: K, declared: Declared) => parsed(key, parseBool, declared);

export const int = <K extends string>(key: K, min: number, max: number, declared: Declared) =>
  parsed(key, (value) => parseInteger(value, min, max), declared);

/** One of a fixed set of lower-case words. */
export function choice<K extends string, const V extends string>(key: K, allowed: readonly V[], declared: Declared): Option<{ [P in K]: V }> {
  return parsed(key, (value) => {
    const lower = value.trim().toLowerCase();
    const found = allowed.find((word) => word === lower);
    return found ? { ok: true, value: found } : { ok: false, error: `${shown(value)} is not one of ${allowed.join(', ')}` };
  }, declared);
}

/** A comma-separated list of names that replaces the previous one (aors, auth, outbound_auth). */
export const names = <K extends string>(key: K, declared: Declared) =>
  parsed(key, (value): Parsed<readonly string[]> => ({ ok: true, value: splitList(value).slice(0, MAX_LIST_ITEMS) }), declared);

/** A comma-separated list of words from a set, each once, replacing the previous list (identify_by). */
export function choices<K extends string, const V extends string>(key: K, allowed: readonly V[], declared: Declared): Option<{ [P in K]: readonly V[] }> {
  return parsed(key, (value): Parsed<readonly V[]> => {
    const list: V[] = [];
    for (const item of splitList(value)) {
      const found = allowed.find((word) => word === item.toLowerCase());
      if (!found) return { ok: false, error: `${shown(item)} is not one of ${allowed.join(', ')}` };
      if (!list.includes(found)) list.push(found);
    }
    return { ok: true, value: list };
  }, declared);
}

/** A list option: each occurrence (and each comma-separated item) adds to the list. */
export function listOf<K extends string, T>(key: K, parse: (item: string) => Parsed<T>, declared: Declared): Option<{ [P in K]: readonly T[] }> {
  return {
    ...info(declared, true),
    apply(draft, value, report) {
      const list = [...draft[key]];
      for (const item of splitList(value)) {
        if (list.length >= MAX_LIST_ITEMS) {
          report.fail(`more than ${MAX_LIST_ITEMS} items`);
          break;
        }
        const result = parse(item);
        if (result.ok) list.push(result.value);
        else report.fail(result.error);
      }
      draft[key] = list;
    },
  };
}

/** An option applied by its own code (allow/disallow, direct_media …); `list` as in OptionInfo. */
export function custom<D>(declared: Declared & { readonly list?: boolean }, apply: Option<D>['apply']): Option<D> {
  return { ...info(declared, declared.list ?? false), apply };
}

// ---- Objects ----------------------------------------------------------------------------------

/** A typed object while its options are applied. */
export type Draft<O> = { -readonly [K in keyof O]: O[K] };

/** Where an object's problems go, each naming the object (and the file line, when known). */
export interface ObjectReport {
  error(key: string, message: string, where?: string): void;
  warn(message: string, where?: string): void;
}

/** One `name=value` as read, with where it was written. */
export interface FieldText {
  readonly name: string;
  readonly value: string;
  readonly where?: string;
}

/**
 * One res_pjsip object type. `D` is the object while it is built (the object's fields, perhaps
 * with a wider type or a note of its own), `O` what comes out.
 */
export interface ObjectDeclaration<O extends { readonly type: string; readonly id: string }, D> {
  readonly type: O['type'];
  /** The object before any option: Asterisk's defaults (a test keeps them equal to each option's `default`). */
  initial(id: string): D;
  /** In the order ARI lists the fields. */
  readonly options: Readonly<Record<string, Option<D>>>;
  /** Checks across options; undefined leaves the object out (it said why). */
  finish(draft: D, report: ObjectReport): O | undefined;
}

/** A declaration with its types closed over: what the builder, the store and the docs read. */
export interface ObjectType<O> {
  readonly type: string;
  readonly options: ReadonlyMap<string, OptionInfo>;
  build(id: string, fields: readonly FieldText[], report: ObjectReport): O | undefined;
  /** The problem with one option's value, as the store checks a PUT; undefined when it is acceptable. */
  check(name: string, value: string): string | undefined;
}

/** Longest option value accepted. */
export const MAX_VALUE_LENGTH = 4096;

export function declareObject<O extends { readonly type: string; readonly id: string }, D>(declaration: ObjectDeclaration<O, D>): ObjectType<O> {
  const options = new Map(Object.entries(declaration.options));
  const type = declaration.type;
  return {
    type,
    options,
    build(id, fields, report) {
      const draft = declaration.initial(id);
      const warned = new Set<string>();
      const warnOnce = (name: string, message: string, at?: string) => {
        if (warned.has(name)) return;
        warned.add(name);
        report.warn(message, at);
      };
      for (const field of fields) {
        const name = field.name.trim().toLowerCase();
        if (name === 'type') continue;
        const option = options.get(name);
        if (!option) {
          warnOnce(name, `${type} option ${shown(name)} is not implemented by Patchbay; ignored`, field.where);
          continue;
        }
        const problem = valueProblem(field.value);
        if (problem) {
          report.error(name, problem, field.where);
          continue;
        }
        if (!option.implemented) warnOnce(name, `${type} option ${shown(name)} is not implemented by Patchbay; ignored`, field.where);
        option.apply(draft, field.value, {
          fail: (message) => report.error(name, message, field.where),
          warn: (message) => report.warn(message, field.where),
        });
      }
      return declaration.finish(draft, report);
    },
    check(name, value) {
      const option = options.get(name);
      if (!option) return `unknown attribute '${name}'`;
      const problem = valueProblem(value);
      if (problem) return problem;
      let failure: string | undefined;
      option.apply(declaration.initial('check'), value, { fail: (message) => void (failure ??= message), warn: () => undefined });
      return failure;
    },
  };
}

function valueProblem(value: string): string | undefined {
  if (value.length > MAX_VALUE_LENGTH) return `longer than ${MAX_VALUE_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\x00\r\n]/.test(value)) return 'is not a text value';
  return undefined;
}
