// Configuration: YAML file (snake_case keys) + environment + programmatic overrides → a frozen,
// fully validated PatchbayConfig. Every problem is reported as one ConfigError naming the key.
// The settings themselves (type, default, check, env variable, documentation) are declared once,
// in settings.ts; this file finds, parses and merges the layers and attributes errors to them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { formatPath, isPlainObject, readSection, walkSettings, describe, type Raw, type Seg, type ValueOf, type YamlOf } from './schema.ts';
import { usesDefaultPassword } from './ari-users.ts';
import { SETTINGS } from './settings.ts';
import { readAsteriskConfigDir } from './asterisk-dir.ts';

export { DEFAULT_USER, type AriUser } from './ari-users.ts';
export type { ConfigObjects } from './config-objects.ts';
export { isLoopback } from './value-checks.ts';

// ---------------------------------------------------------------------------------------------
// Public types (derived from the declarations in settings.ts)

export type PatchbayConfig = ValueOf<typeof SETTINGS> & {
  /** True when any user still has the embedded default credentials asterisk/asterisk. */
  readonly usingDefaultPassword: boolean;
  /** Absolute path of the file that was loaded, or null. */
  readonly configFile: string | null;
  /** What was not understood in `asterisk_config_dir`, one line each, logged at start-up. */
  readonly warnings: readonly string[];
  /** Where the values came from (the start-up line and `--check` name them). */
  readonly origin: ConfigOrigin;
};

/** The sources a configuration was read from, and which settings they set. */
export interface ConfigOrigin {
  /** The YAML file, or null. */
  readonly file: string | null;
  /** The Asterisk configuration directory read (`asterisk_config_dir`), or null. */
  readonly asteriskDir: string | null;
  /** The `PATCHBAY_*` environment variables that set a value. */
  readonly environment: readonly string[];
  /**
   * The settings (dotted, YAML spelling) given a value by a source rather than left to their
   * default, each with the source that set it last (the file, `env NAME`, `<dir>/http.conf:4`,
   * `overrides`): an explicitly configured SIP port that cannot be bound stops start-up, a
   * defaulted one does not; `--check` lists them by source.
   */
  readonly explicit: Readonly<Record<string, string>>;
}

/** One phrase naming the sources, e.g. `/etc/patchbay.yaml + Asterisk directory /etc/asterisk`. */
export function describeConfigSources(origin: ConfigOrigin): string {
  const parts: string[] = [];
  if (origin.file) parts.push(origin.file);
  if (origin.asteriskDir) parts.push(`Asterisk directory ${origin.asteriskDir}`);
  if (origin.environment.length > 0) parts.push(`environment ${origin.environment.join(', ')}`);
  return parts.length > 0 ? parts.join(' + ') : '(embedded defaults)';
}

/** The YAML document shape (snake_case). `null` anywhere means "not set" (use the default). */
export type PatchbayYaml = YamlOf<typeof SETTINGS>;

type DeepPartial<T> = T extends readonly (infer _U)[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> | null }
    : T;

/** A YAML-shaped (snake_case) partial configuration, merged over the file (objects merge, arrays replace). */
export type DeepPartialYaml = DeepPartial<PatchbayYaml>;

export interface LoadConfigOptions {
  /** Config file. `undefined` → `$PATCHBAY_CONFIG` if set, else no file. `null` → no file (env ignored). */
  path?: string | null;
  /** Defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Highest-precedence values (tests). */
  overrides?: DeepPartialYaml;
  /** Test hook: replaces `os.networkInterfaces` when deriving the default server id. */
  networkInterfaces?: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
}

/**
 * A configuration problem. `key` is the dotted path (`ari.users[0].password_format`), or `''` for
 * problems with the file as a whole (unreadable, YAML syntax error). The message is one line.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly key: string;
  readonly reason: string;
  readonly file: string | null;
  readonly line: number | null;
  /** Where a bad value came from when not the file, e.g. `env PATCHBAY_HTTP_PORT` or `overrides`. */
  readonly source: string | null;

  constructor(key: string, reason: string, where: { file?: string | null; line?: number | null; source?: string | null } = {}) {
    const oneLine = reason.replace(/\s*[\r\n]+\s*/g, ' ').trim();
    const file = where.file ?? null;
    const line = where.line ?? null;
    const source = where.source ?? null;
    let message: string;
    if (key === '') {
      message = file
        ? `config error in ${file}${line !== null ? ` at line ${line}` : ''}: ${oneLine}`
        : `config error: ${oneLine}`;
    } else {
      let suffix = '';
      if (source) suffix = ` (from ${source})`;
      else if (file) suffix = line !== null ? ` (${file}:${line})` : ` (${file})`;
      message = `config error at ${key}: ${oneLine}${suffix}`;
    }
    super(message);
    this.key = key;
    this.reason = oneLine;
    this.file = file;
    this.line = line;
    this.source = source;
  }
}

// ---------------------------------------------------------------------------------------------
// Documentation

export interface SettingDoc {
  readonly key: string;
  /** Markdown, as in the table of docs/configuration.md. */
  readonly default: string;
  readonly env?: string;
  readonly description: string;
}

/** Every setting with its default and env override, from the declarations. */
export const DEFAULTS_DOC: readonly SettingDoc[] = Object.freeze(
  walkSettings(SETTINGS).map(({ key, setting }) =>
    Object.freeze({ key, default: setting.doc.default, env: setting.env?.name, description: setting.doc.description })),
);

/** The Settings table of docs/configuration.md (`npm run docs:config` writes it there). */
export function renderSettingsTable(): string {
  const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
  const rows = DEFAULTS_DOC.map((s) =>
    `| \`${s.key}\` | ${cell(s.default)} | ${s.env ? `\`${s.env}\` ` : ''}| ${cell(s.description)} |`);
  return ['| Key | Default | Env | Meaning |', '|---|---|---|---|', ...rows].join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// Loading

/** The environment variables the declarations name, with the YAML path each overrides. */
const ENV_KEYS = walkSettings(SETTINGS).flatMap(({ key, setting }) =>
  setting.env ? [{ env: setting.env.name, path: key.split('.'), parse: setting.env.parse }] : []);

export function loadConfig(options: LoadConfigOptions = {}): PatchbayConfig {
  const env = options.env ?? process.env;
  const cwd = process.cwd();

  let configFile: string | null = null;
  if (options.path !== undefined) configFile = options.path === null ? null : path.resolve(cwd, options.path);
  else if (env.PATCHBAY_CONFIG) configFile = path.resolve(cwd, env.PATCHBAY_CONFIG);

  // 1. the file
  let fileData: Raw = {};
  let doc: Document | null = null;
  const lineCounter = new LineCounter();
  if (configFile !== null) {
    let text: string;
    try {
      text = fs.readFileSync(configFile, 'utf8');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new ConfigError('', `cannot read config file: ${e.code ?? e.message}`, { file: configFile });
    }
    doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
    const problem = doc.errors[0];
    if (problem) {
      const line = lineCounter.linePos(problem.pos[0]).line;
      const reason = problem.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?\s*$/, '').replace(/:$/, '');
      throw new ConfigError('', `YAML syntax error: ${reason}`, { file: configFile, line });
    }
    let js: unknown;
    try {
      js = doc.toJS({ maxAliasCount: 1000 });
    } catch (err) {
      throw new ConfigError('', `YAML error: ${(err as Error).message}`, { file: configFile });
    }
    if (js === null || js === undefined) fileData = {};
    else if (isPlainObject(js)) fileData = js;
    else throw new ConfigError('', `the top level must be a mapping of settings, got ${describe(js)}`, { file: configFile, line: 1 });
  }

  // 2. environment
  const envLayer: Raw = {};
  const envSources = new Map<string, string>();
  for (const { env: name, path: p, parse } of ENV_KEYS) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setIn(envLayer, p, parse(value, cwd));
    envSources.set(p.join('.'), `env ${name}`);
  }

  // 3. merge: file < env < overrides
  const overrides = (options.overrides ?? {}) as unknown;
  if (!isPlainObject(overrides)) throw new ConfigError('', 'overrides must be a mapping', { source: 'overrides' });
  let merged = deepMerge(deepMerge(fileData, envLayer), overrides);

  const baseDir = configFile ? path.dirname(configFile) : cwd;
  // 4. an Asterisk configuration directory, beneath all of the above
  let asteriskWarnings: string[] = [];
  let asteriskDirRead: string | null = null;
  const asteriskDir = merged.asterisk_config_dir;
  if (typeof asteriskDir === 'string' && asteriskDir.trim() !== '' && !asteriskDir.includes('\0')) {
    const dir = path.resolve(envSources.has('asterisk_config_dir') ? cwd : baseDir, asteriskDir);
    if (isDirectory(dir)) {
      const imported = readAsteriskConfigDir(dir);
      asteriskWarnings = imported.warnings;
      asteriskDirRead = dir;
      // A bad imported value is reported against the line of the Asterisk file it came from.
      for (const [key, at] of imported.sources) {
        const p = key.split('.');
        if (!coversPath(fileData, p) && !envSources.has(key) && !coversPath(overrides, p)) envSources.set(key, path.join(dir, at));
      }
      merged = deepMerge(imported.layer, merged);
    }
  }
  const v = new Validator(configFile, doc, lineCounter, envSources, overrides);
  const settings = readSection(SETTINGS, merged, [], {
    fail: (p, reason) => v.fail(p, reason),
    baseDir,
    networkInterfaces: options.networkInterfaces ?? os.networkInterfaces,
  });
  return Object.freeze({
    ...settings,
    usingDefaultPassword: usesDefaultPassword(settings.ari.users),
    configFile,
    warnings: Object.freeze(asteriskWarnings),
    origin: Object.freeze({
      file: configFile,
      asteriskDir: asteriskDirRead,
      environment: Object.freeze([...new Set([...envSources.values()].filter((source) => source.startsWith('env ')).map((source) => source.slice(4)))]),
      explicit: Object.freeze(explicitSettings(configFile, fileData, envSources, overrides)),
    }),
  });
}

// ---------------------------------------------------------------------------------------------
// Validation

class Validator {
  constructor(
    private readonly file: string | null,
    private readonly doc: Document | null,
    private readonly lines: LineCounter,
    private readonly envSources: ReadonlyMap<string, string>,
    private readonly overrides: Raw,
  ) {}

  fail(p: readonly Seg[], reason: string): never {
    // Attribute the problem to env, overrides or the file (with a line number), in that order.
    for (const [key, source] of this.envSources) {
      const kp = key.split('.');
      if (kp.length <= p.length && kp.every((s, i) => s === p[i])) throw new ConfigError(formatPath(p), reason, { source });
    }
    if (coversPath(this.overrides, p)) throw new ConfigError(formatPath(p), reason, { source: 'overrides' });
    throw new ConfigError(formatPath(p), reason, { file: this.file, line: this.lineOf(p) });
  }

  private lineOf(p: readonly Seg[]): number | null {
    if (!this.doc) return null;
    let node: unknown = this.doc.contents;
    let pos: number | undefined;
    for (const seg of p) {
      if (isMap(node)) {
        const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(seg));
        if (!pair) break;
        pos = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg] as { range?: [number, number, number] } | undefined;
        if (!item) break;
        pos = item.range?.[0];
        node = item;
      } else break;
    }
    return pos === undefined ? null : this.lines.linePos(pos).line;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

function deepMerge(base: Raw, over: Raw): Raw {
  const out: Raw = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const b = out[k];
    Object.defineProperty(out, k, {
      value: isPlainObject(b) && isPlainObject(v) ? deepMerge(b, v) : v,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function setIn(target: Raw, p: readonly string[], value: unknown): void {
  let node = target;
  for (const seg of p.slice(0, -1)) {
    if (!isPlainObject(node[seg])) node[seg] = {};
    node = node[seg] as Raw;
  }
  node[p[p.length - 1]!] = value;
}

/** Each setting a source gave a value, with the source that won (overrides > env > file > Asterisk directory). */
function explicitSettings(file: string | null, fileData: Raw, sources: ReadonlyMap<string, string>, overrides: unknown): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const { key } of walkSettings(SETTINGS)) {
    const p = key.split('.');
    if (setsValue(overrides, p)) out[key] = 'overrides';
    else if (sources.get(key)?.startsWith('env ')) out[key] = sources.get(key)!;
    else if (file !== null && setsValue(fileData, p)) out[key] = file;
    else if (sources.has(key)) out[key] = sources.get(key)!;
  }
  return out;
}

/** True when `layer` holds a value (not null, which means "the default") at `p` or beneath it. */
function setsValue(layer: unknown, p: readonly string[]): boolean {
  let node: unknown = layer;
  for (const seg of p) {
    if (!isPlainObject(node) || !Object.hasOwn(node, seg)) return false;
    node = node[seg];
  }
  return node !== null && node !== undefined;
}

/** True when `over` sets the value at `p` or replaces one of its ancestors wholesale. */
function coversPath(over: unknown, p: readonly Seg[]): boolean {
  let node: unknown = over;
  for (let i = 0; i < p.length; i++) {
    if (isPlainObject(node)) {
      if (!Object.hasOwn(node, String(p[i])) || node[String(p[i])] === undefined) return false;
      node = node[String(p[i])];
    } else return i > 0;
  }
  return p.length > 0;
}
