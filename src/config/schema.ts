// A small schema for the configuration: each setting is declared once (YAML key, type, bounds,
// default, environment variable, documentation), and that one declaration gives the loaded value's
// TypeScript type, the YAML input type, the validation with its one-line key-naming errors, the
// environment override and the row of the documentation table. No schema library: the messages
// (`must be between 0 and 65535, got 70000`, `unknown key (did you mean ari.users?)`) are the
// product here, and a library's would have to be rewritten anyway.
import type os from 'node:os';
import path from 'node:path';

export type Seg = string | number;
export type Raw = Record<string, unknown>;

/** What a setting's reader gets besides its raw value. */
export interface ReadContext {
  /** Throws the ConfigError for the key at `p`, attributed to the file line, env or overrides. */
  fail(p: readonly Seg[], reason: string): never;
  /** Relative paths in the file resolve against it (the file's directory, else the cwd). */
  readonly baseDir: string;
  /** `os.networkInterfaces`, replaceable by tests (the default server id). */
  readonly networkInterfaces: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
}

/** Documentation of one setting; both strings are Markdown, as they appear in docs/configuration.md. */
export interface DocText {
  readonly default: string;
  readonly description: string;
}

/**
 * One setting. `T` is the loaded value, `Y` the YAML input. `scope` holds the section's values read
 * so far (camelCase), so a default or check can depend on an earlier sibling (`dirs.logs` on `dirs.data`).
 */
export interface Setting<T, Y> {
  readonly kind: 'setting';
  readonly doc: DocText;
  /** Environment variable that overrides the setting, and how its text becomes a YAML value. */
  readonly env?: { readonly name: string; readonly parse: (text: string, cwd: string) => unknown };
  /** Read after every other field of its section (a default that costs something or writes a file). */
  readonly late?: boolean;
  /** For a list of records: the item's fields, documented as `key[].field`. */
  readonly items?: Section<Fields>;
  /** `siblings` is the section's mapping as written (key order included), for a setting whose meaning depends on it. */
  read(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw, siblings: Raw): T;
  /** Phantom: the YAML input type. */
  readonly yaml?: Y;
}

export type AnySetting = Setting<unknown, unknown>;
export type Fields = { readonly [key: string]: AnySetting | Section<Fields> };

export interface Section<F extends Fields> {
  readonly kind: 'section';
  readonly fields: F;
  /** Checks across fields, run after the fields and before `late` ones. */
  readonly check?: (built: Raw, p: readonly Seg[], ctx: ReadContext) => void;
}

// ---- Types derived from the declarations ------------------------------------------------------

type CamelCase<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;

/** The loaded (camelCase, readonly) value of a setting or section. */
export type ValueOf<N> =
  N extends Setting<infer T, unknown>
    ? T
    : N extends Section<infer F>
      ? { readonly [K in keyof F & string as CamelCase<K>]: ValueOf<F[K]> }
      : never;

/** The YAML (snake_case) input of a setting or section; `null` anywhere means "use the default". */
export type YamlOf<N> =
  N extends Setting<unknown, infer Y>
    ? Y
    : N extends Section<infer F>
      ? { [K in keyof F]?: YamlOf<F[K]> }
      : never;

// ---- Constructors -----------------------------------------------------------------------------

type Default<T> = T | ((scope: Raw) => T);
const resolveDefault = <T>(d: Default<T>, scope: Raw): T => (typeof d === 'function' ? (d as (s: Raw) => T)(scope) : d);
const code = (v: unknown): string => `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``;

interface Common<T> {
  readonly default: Default<T>;
  /** Markdown description for the documentation table. */
  readonly doc: string;
  /** Markdown for the Default column, when `default` alone does not say it (functions, units). */
  readonly docDefault?: string;
  readonly env?: string;
  /** Read after the other fields of its section (it depends on a later sibling, or costs something). */
  readonly late?: boolean;
}

function docOf<T>(o: Common<T>): DocText {
  if (o.docDefault === undefined && typeof o.default === 'function') throw new Error('a computed default needs docDefault');
  return { default: o.docDefault ?? code(o.default), description: o.doc };
}

const isUnset = (v: unknown): v is null | undefined => v === undefined || v === null;

/** A check returns a problem (one line, without the key) or null. */
export type Check<T> = (value: T, scope: Raw) => string | null;

export function integer(o: Common<number> & { readonly min: number; readonly max: number }): Setting<number, number> {
  return {
    kind: 'setting',
    doc: docOf(o),
    env: o.env ? { name: o.env, parse: (text) => (/^\s*\d+\s*$/.test(text) ? Number(text) : text) } : undefined,
    read(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw) {
      if (isUnset(v)) return resolveDefault(o.default, scope);
      if (typeof v !== 'number' || !Number.isInteger(v)) ctx.fail(p, `must be an integer, got ${describe(v)}`);
      if (v < o.min || v > o.max) ctx.fail(p, `must be between ${o.min} and ${o.max}, got ${v}`);
      return v;
    },
  };
}

export function decimal(o: Common<number> & { readonly min: number; readonly max: number }): Setting<number, number> {
  return {
    kind: 'setting',
    doc: docOf(o),
    read(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw) {
      if (isUnset(v)) return resolveDefault(o.default, scope);
      if (typeof v !== 'number' || !Number.isFinite(v)) ctx.fail(p, `must be a number, got ${describe(v)}`);
      if (v < o.min || v > o.max) ctx.fail(p, `must be between ${o.min} and ${o.max}, got ${v}`);
      return v;
    },
  };
}

export function boolean(o: Common<boolean>): Setting<boolean, boolean> {
  return {
    kind: 'setting',
    doc: docOf(o),
    read(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw) {
      if (isUnset(v)) return resolveDefault(o.default, scope);
      if (typeof v !== 'boolean') {
        const hint = typeof v === 'string' && /^(yes|no|on|off|y|n)$/i.test(v) ? ' (YAML 1.2: write true or false)' : '';
        ctx.fail(p, `must be true or false, got ${describe(v)}${hint}`);
      }
      return v;
    },
  };
}

function readString(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw, check?: Check<string>): string {
  if (typeof v !== 'string') {
    ctx.fail(p, `must be a string, got ${describe(v)}${typeof v === 'number' || typeof v === 'boolean' ? ' (quote it in YAML)' : ''}`);
  }
  const problem = check?.(v, scope);
  if (problem) ctx.fail(p, problem);
  return v;
}

type StringOptions = Common<string> & { readonly check?: Check<string> };

export function string(o: StringOptions): Setting<string, string>;
export function string(o: Omit<StringOptions, 'default'> & { readonly required: true; readonly docDefault: string }): Setting<string, string>;
export function string(o: Omit<StringOptions, 'default'> & { readonly default?: Default<string>; readonly required?: true }): Setting<string, string> {
  return {
    kind: 'setting',
    late: o.late,
    doc: o.default === undefined ? { default: o.docDefault ?? '(required)', description: o.doc } : docOf({ ...o, default: o.default }),
    env: o.env ? { name: o.env, parse: (text) => text } : undefined,
    read(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw) {
      if (isUnset(v)) {
        if (o.default === undefined) ctx.fail(p, 'is required');
        return resolveDefault(o.default, scope);
      }
      return readString(v, p, ctx, scope, o.check);
    },
  };
}

export const notEmptyPath: Check<string> = (s) =>
  s.trim() === '' ? 'must not be empty' : s.includes('\0') ? 'must not contain NUL' : null;

/**
 * A file-system path: relative paths in the file resolve against the file's directory, from the
 * environment against the working directory. `null` default = not set (stays null).
 */
export function filePath<D extends string | null>(
  o: Omit<Common<D>, 'default'> & { readonly default: Default<D>; readonly check?: (resolved: string, p: readonly Seg[], ctx: ReadContext) => void },
): Setting<string | D, string | null> {
  return {
    kind: 'setting',
    doc: docOf(o),
    env: o.env ? { name: o.env, parse: (text, cwd) => path.resolve(cwd, text) } : undefined,
    read(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw) {
      if (isUnset(v)) {
        const d = resolveDefault(o.default, scope);
        return d === null ? d : path.resolve(ctx.baseDir, d);
      }
      const resolved = path.resolve(ctx.baseDir, readString(v, p, ctx, scope, notEmptyPath));
      o.check?.(resolved, p, ctx);
      return resolved;
    },
  };
}

export function oneOf<const V extends string>(o: Common<V> & { readonly values: readonly V[] }): Setting<V, V> {
  return {
    kind: 'setting',
    doc: docOf(o),
    read(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw) {
      if (isUnset(v)) return resolveDefault(o.default, scope);
      if (typeof v !== 'string' || !(o.values as readonly string[]).includes(v)) {
        ctx.fail(p, `must be one of ${o.values.join(', ')}${typeof v === 'string' ? `, got '${v}'` : `, got ${describe(v)}`}`);
      }
      return v as V;
    },
  };
}

/**
 * A list of strings, or one string (split at commas when `comma`). Empty items are dropped (a
 * comma string) or refused (a list), duplicates removed; `map` turns each item into its final form.
 */
export function stringList(
  o: Common<readonly string[]> & { readonly comma: boolean; readonly check?: Check<string>; readonly map?: (item: string, ctx: ReadContext) => string },
): Setting<readonly string[], string[] | string> {
  return {
    kind: 'setting',
    doc: docOf(o),
    read(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw) {
      let items: unknown[];
      if (isUnset(v)) items = [...resolveDefault(o.default, scope)];
      else if (typeof v === 'string') items = o.comma ? v.split(',') : [v];
      else if (Array.isArray(v)) items = v;
      else ctx.fail(p, `must be a list${o.comma ? ' or a comma-separated string' : ' or a string'}, got ${describe(v)}`);
      const out: string[] = [];
      items.forEach((item, i) => {
        const ip = Array.isArray(v) ? [...p, i] : p;
        if (typeof item !== 'string') ctx.fail(ip, `must be a string, got ${describe(item)}`);
        const s = o.comma ? item.trim() : item;
        if (s === '') {
          if (Array.isArray(v)) ctx.fail(ip, 'must not be empty');
          return;
        }
        if (!isUnset(v)) {
          const problem = o.check?.(s, scope);
          if (problem) ctx.fail(ip, problem);
        }
        const mapped = o.map ? o.map(s, ctx) : s;
        if (!out.includes(mapped)) out.push(mapped);
      });
      return Object.freeze(out);
    },
  };
}

/** A list of records, each read by the `item` section; `check` sees each finished item (duplicates …). */
export function recordList<F extends Fields>(
  item: Section<F>,
  o: Omit<Common<readonly ValueOf<Section<F>>[]>, 'env'> & {
    readonly what: string;
    readonly itemWhat: string;
    readonly check?: (value: ValueOf<Section<F>>, index: number, before: readonly ValueOf<Section<F>>[], p: readonly Seg[], ctx: ReadContext) => void;
  },
): Setting<readonly ValueOf<Section<F>>[], YamlOf<Section<F>>[]> {
  return {
    kind: 'setting',
    doc: docOf(o),
    items: item as unknown as Section<Fields>,
    read(v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw) {
      if (isUnset(v)) return Object.freeze([...resolveDefault(o.default, scope)]);
      if (!Array.isArray(v)) ctx.fail(p, `must be a list of ${o.what}, got ${describe(v)}`);
      const out: ValueOf<Section<F>>[] = [];
      v.forEach((raw, i) => {
        const ip = [...p, i];
        if (isUnset(raw)) ctx.fail(ip, `must be ${o.itemWhat}`);
        const value = readSection(item, raw, ip, ctx);
        o.check?.(value, i, out, ip, ctx);
        out.push(value);
      });
      return Object.freeze(out);
    },
  };
}

/** A setting read by its own code (mappings of user-chosen names, computed defaults …). */
export function custom<T, Y>(o: {
  readonly doc: string;
  readonly docDefault: string;
  readonly late?: boolean;
  readonly read: (v: unknown, p: readonly Seg[], ctx: ReadContext, scope: Raw, siblings: Raw) => T;
}): Setting<T, Y> {
  return { kind: 'setting', doc: { default: o.docDefault, description: o.doc }, late: o.late, read: o.read };
}

export function section<const F extends Fields>(fields: F, check?: Section<F>['check']): Section<F> {
  return { kind: 'section', fields, check };
}

// ---- Reading ----------------------------------------------------------------------------------

export function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Reads a section: unknown keys are refused (with the nearest valid key), then every field in order. */
export function readSection<F extends Fields>(s: Section<F>, v: unknown, p: readonly Seg[], ctx: ReadContext): ValueOf<Section<F>> {
  const keys = Object.keys(s.fields);
  let raw: Raw = {};
  if (!isUnset(v)) {
    if (!isPlainObject(v)) ctx.fail(p, `must be a mapping, got ${describe(v)}`);
    for (const k of Object.keys(v)) {
      if (!keys.includes(k)) {
        const hint = closest(k, keys);
        ctx.fail([...p, k], `unknown key${hint ? ` (did you mean ${formatPath([...p, hint])}?)` : ''}`);
      }
    }
    raw = v;
  }
  const built: Raw = {};
  const readField = (key: string): void => {
    const node = s.fields[key]!;
    const value = node.kind === 'section' ? readSection(node, raw[key], [...p, key], ctx) : node.read(raw[key], [...p, key], ctx, built, raw);
    built[camelCase(key)] = value;
  };
  const late = keys.filter((k) => s.fields[k]!.kind === 'setting' && (s.fields[k] as AnySetting).late);
  for (const key of keys) if (!late.includes(key)) readField(key);
  s.check?.(built, p, ctx);
  for (const key of late) readField(key);
  // The declared order, whatever the reading order was.
  const ordered: Raw = {};
  for (const key of keys) ordered[camelCase(key)] = built[camelCase(key)];
  return Object.freeze(ordered) as ValueOf<Section<F>>;
}

/** Every setting with its dotted key (`ari.users[].name` for the fields of list items). */
export function walkSettings(s: Section<Fields>, prefix = ''): Array<{ key: string; setting: AnySetting }> {
  const out: Array<{ key: string; setting: AnySetting }> = [];
  for (const [k, node] of Object.entries(s.fields)) {
    const key = prefix === '' ? k : `${prefix}.${k}`;
    if (node.kind === 'section') out.push(...walkSettings(node, key));
    else {
      out.push({ key, setting: node });
      if (node.items) out.push(...walkSettings(node.items, `${key}[]`));
    }
  }
  return out;
}

// ---- Helpers ----------------------------------------------------------------------------------

export function isPlainObject(v: unknown): v is Raw {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export function formatPath(p: readonly Seg[]): string {
  let s = '';
  for (const seg of p) s += typeof seg === 'number' ? `[${seg}]` : s === '' ? seg : `.${seg}`;
  return s;
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `string '${v.length > 40 ? v.slice(0, 40) + '…' : v}'`;
  return `${typeof v} ${String(v)}`;
}

function closest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDist = Infinity;
  for (const c of candidates) {
    const d = levenshtein(word.toLowerCase(), c);
    if (d < bestDist) [best, bestDist] = [c, d];
  }
  return best !== null && bestDist <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
