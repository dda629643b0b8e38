// Configuration: YAML file (snake_case keys) + environment + programmatic overrides → a frozen,
// fully validated PatchbayConfig. Every problem is reported as one ConfigError naming the key.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { verifyPassword } from '../ari/passwords.ts';

// ---------------------------------------------------------------------------------------------
// Public types

export interface AriUser {
  readonly name: string;
  readonly password: string;
  readonly passwordFormat: 'plain' | 'crypt';
  readonly readOnly: boolean;
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

export type ConfigObjects = Readonly<
  Record<string, Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, string>>>>>>>
>;

export interface PatchbayConfig {
  /** Entity id, MAC-like `xx:xx:xx:xx:xx:xx` (lower case). */
  readonly serverId: string;
  readonly systemName: string;
  readonly http: { readonly bind: string; readonly port: number; readonly bodyLimitBytes: number };
  readonly ari: {
    readonly users: readonly AriUser[];
    readonly authRealm: string;
    readonly channelvars: readonly string[];
    readonly allowedOrigins: readonly string[];
    readonly pretty: boolean;
    readonly developerMode: boolean;
    readonly websocket: { readonly pingIntervalSeconds: number; readonly maxQueuedMessages: number; readonly maxQueuedBytes: number };
    /** Failed-login limits per client address; `maxPerAddress: 0` = off. */
    readonly failedLogins: {
      readonly maxPerAddress: number;
      readonly windowSeconds: number;
      readonly blockSeconds: number;
      readonly trackedAddresses: number;
    };
  };
  /** All absolute paths. */
  readonly dirs: {
    readonly data: string;
    readonly logs: string;
    readonly recordings: string;
    readonly sounds: readonly string[];
    readonly moh: string;
  };
  /** `file: null` → the embedded default dialplan. */
  readonly dialplan: { readonly file: string | null };
  readonly logging: { readonly level: LogLevel; readonly console: boolean; readonly maxLogChannels: number };
  readonly language: string;
  /** 0 = unlimited. */
  readonly maxChannels: number;
  /** Most Local channel pairs in a row (a Local channel dialling Local ...); 0 = unlimited. */
  readonly localMaxDepth: number;
  /** 0 = unlimited. */
  readonly maxOpenFiles: number;
  /** 0 = unlimited. */
  readonly maxLoad: number;
  /** Read-only dynamic configuration objects from the file: configClass → objectType → id → field → value. */
  readonly configObjects: ConfigObjects;
  /** True when any user still has the embedded default credentials asterisk/asterisk. */
  readonly usingDefaultPassword: boolean;
  /** Absolute path of the file that was loaded, or null. */
  readonly configFile: string | null;
}

/** The YAML document shape (snake_case). `null` anywhere means "not set" (use the default). */
export interface PatchbayYaml {
  server_id?: string;
  system_name?: string;
  http?: { bind?: string; port?: number; body_limit_bytes?: number };
  ari?: {
    users?: Array<{ name?: string; password?: string; password_format?: 'plain' | 'crypt'; read_only?: boolean }>;
    auth_realm?: string;
    channelvars?: string[] | string;
    allowed_origins?: string[] | string;
    pretty?: boolean;
    developer_mode?: boolean;
    websocket?: { ping_interval_seconds?: number; max_queued_messages?: number; max_queued_bytes?: number };
    failed_logins?: { max_per_address?: number; window_seconds?: number; block_seconds?: number; tracked_addresses?: number };
  };
  dirs?: { data?: string; logs?: string; recordings?: string; sounds?: string[] | string; moh?: string };
  dialplan?: { file?: string | null };
  logging?: { level?: LogLevel; console?: boolean; max_log_channels?: number };
  language?: string;
  max_channels?: number;
  local_max_depth?: number;
  max_open_files?: number;
  max_load?: number;
  config_objects?: Record<string, Record<string, Record<string, Record<string, string | number | boolean> | null>>>;
}

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
// Defaults

export const DEFAULT_USER: AriUser = Object.freeze({
  name: 'asterisk',
  password: 'asterisk',
  passwordFormat: 'plain',
  readOnly: false,
});

export interface SettingDoc {
  readonly key: string;
  readonly default: string;
  readonly env?: string;
  readonly description: string;
}

/** Every setting with its default and env override; docs/configuration.md follows this list. */
export const DEFAULTS_DOC: readonly SettingDoc[] = Object.freeze([
  { key: 'server_id', default: 'MAC of the first non-internal network interface, else a generated id stored in <data>/server-id', description: 'Entity id (xx:xx:xx:xx:xx:xx) reported as asterisk_id / entity_id.' },
  { key: 'system_name', default: 'os.hostname()', description: 'System name reported in system information.' },
  { key: 'http.bind', default: '127.0.0.1', env: 'PATCHBAY_HTTP_BIND', description: 'Listen address (IP or host name).' },
  { key: 'http.port', default: '8088', env: 'PATCHBAY_HTTP_PORT', description: 'Listen port, 0-65535 (0 = ephemeral).' },
  { key: 'http.body_limit_bytes', default: '1048576', description: 'Largest accepted request body (413 above).' },
  { key: 'ari.users', default: '[{name: asterisk, password: asterisk, password_format: plain, read_only: false}]', description: 'ARI users.' },
  { key: 'ari.users[].name', default: '(required)', description: 'User name (no ":").' },
  { key: 'ari.users[].password', default: '(required)', description: 'Password, or a crypt hash when password_format is crypt.' },
  { key: 'ari.users[].password_format', default: 'plain', description: 'plain or crypt ($6$ SHA-512, $5$ SHA-256, $1$ MD5).' },
  { key: 'ari.users[].read_only', default: 'false', description: 'Only GET and OPTIONS allowed.' },
  { key: 'ari.auth_realm', default: 'Asterisk REST Interface', description: 'Realm in WWW-Authenticate.' },
  { key: 'ari.channelvars', default: '[]', description: 'Channel variables included in channel snapshots (list or comma string).' },
  { key: 'ari.allowed_origins', default: '[]', description: 'CORS origins (scheme://host[:port] or *; list or comma string).' },
  { key: 'ari.pretty', default: 'false', description: 'Pretty-print JSON responses.' },
  { key: 'ari.developer_mode', default: 'false', description: 'Enable developer-only behaviour.' },
  { key: 'ari.websocket.ping_interval_seconds', default: '30', description: 'WebSocket ping interval; 0 disables pings.' },
  { key: 'ari.websocket.max_queued_messages', default: '50000', description: 'Messages a socket may leave untaken after a flush before it counts as too slow.' },
  { key: 'ari.failed_logins.max_per_address', default: '10', description: 'Failed logins one client address (an IPv6 /64) may make per window before it is refused without any check; 0 = no limit.' },
  { key: 'ari.failed_logins.window_seconds', default: '60', description: 'Window the failed logins are counted in.' },
  { key: 'ari.failed_logins.block_seconds', default: '60', description: 'How long an address that reached the limit is refused.' },
  { key: 'ari.failed_logins.tracked_addresses', default: '10000', description: 'Addresses remembered at once (the least recently failing is forgotten first).' },
  { key: 'ari.websocket.max_queued_bytes', default: '16777216', description: 'Bytes a socket may leave untaken before it counts as too slow (bounds the memory one client costs).' },
  { key: 'dirs.data', default: './data', env: 'PATCHBAY_DATA_DIR', description: 'Data directory.' },
  { key: 'dirs.logs', default: '<data>/logs', description: 'Log directory.' },
  { key: 'dirs.recordings', default: '<data>/recordings', description: 'Recording directory.' },
  { key: 'dirs.sounds', default: '[<data>/sounds, /usr/share/asterisk/sounds, /var/lib/asterisk/sounds]', description: 'Sound search path, in order (list or single path); generated prompts only fill in for names none of them has.' },
  { key: 'dirs.moh', default: '<data>/moh', description: 'Music-on-hold directory.' },
  { key: 'dialplan.file', default: 'null (embedded default dialplan)', description: 'Dialplan file.' },
  { key: 'logging.level', default: 'info', description: 'trace, debug, info, warn, error or fatal.' },
  { key: 'logging.console', default: 'true', description: 'JSON logs to stdout; false writes <logs>/patchbay.log.' },
  { key: 'logging.max_log_channels', default: '64', description: 'Most log channels at once (ARI addLog answers 409 beyond), counting the console and messages.log.' },
  { key: 'language', default: 'en', description: 'Default channel language.' },
  { key: 'max_channels', default: '0', description: 'Channel limit; 0 = unlimited.' },
  { key: 'local_max_depth', default: '20', description: 'Most Local channel pairs in a row (Local dialling Local ...); 0 = unlimited.' },
  { key: 'max_open_files', default: '0', description: 'Open-file limit; 0 = unlimited.' },
  { key: 'max_load', default: '0', description: 'Load-average limit; 0 = unlimited.' },
  { key: 'config_objects', default: '{}', description: 'Read-only dynamic configuration objects: class → type → id → field → value.' },
]);

/** Where Asterisk's prompts are installed: by distribution packages, and by Asterisk's own `make install`. */
const DEFAULT_SYSTEM_SOUNDS = ['/usr/share/asterisk/sounds', '/var/lib/asterisk/sounds'];
const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const SERVER_ID_RE = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/i;
const SERVER_ID_FILE = 'server-id';

// ---------------------------------------------------------------------------------------------
// Loading

type Seg = string | number;
type Raw = Record<string, unknown>;

const ENV_KEYS: ReadonlyArray<{ env: string; path: readonly string[] }> = [
  { env: 'PATCHBAY_HTTP_PORT', path: ['http', 'port'] },
  { env: 'PATCHBAY_HTTP_BIND', path: ['http', 'bind'] },
  { env: 'PATCHBAY_DATA_DIR', path: ['dirs', 'data'] },
];

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
  for (const { env: name, path: p } of ENV_KEYS) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    let v: unknown = value;
    if (name === 'PATCHBAY_HTTP_PORT') v = /^\s*\d+\s*$/.test(value) ? Number(value) : value;
    if (name === 'PATCHBAY_DATA_DIR') v = path.resolve(cwd, value);
    setIn(envLayer, p, v);
    envSources.set(p.join('.'), `env ${name}`);
  }

  // 3. merge: file < env < overrides
  const overrides = (options.overrides ?? {}) as unknown;
  if (!isPlainObject(overrides)) throw new ConfigError('', 'overrides must be a mapping', { source: 'overrides' });
  const merged = deepMerge(deepMerge(fileData, envLayer), overrides);

  const baseDir = configFile ? path.dirname(configFile) : cwd;
  const v = new Validator(configFile, doc, lineCounter, envSources, overrides);
  return Object.freeze(v.build(merged, baseDir, options.networkInterfaces ?? os.networkInterfaces));
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
      if (kp.length <= p.length && kp.every((s, i) => s === p[i])) throw new ConfigError(fmtPath(p), reason, { source });
    }
    if (coversPath(this.overrides, p)) throw new ConfigError(fmtPath(p), reason, { source: 'overrides' });
    throw new ConfigError(fmtPath(p), reason, { file: this.file, line: this.lineOf(p) });
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

  // --- primitive readers --------------------------------------------------------------------

  section(p: readonly Seg[], v: unknown, allowed: readonly string[]): Raw {
    if (v === undefined || v === null) return {};
    if (!isPlainObject(v)) this.fail(p, `must be a mapping, got ${describe(v)}`);
    for (const k of Object.keys(v)) {
      if (!allowed.includes(k)) {
        const hint = closest(k, allowed);
        this.fail([...p, k], `unknown key${hint ? ` (did you mean ${fmtPath([...p, hint])}?)` : ''}`);
      }
    }
    return v;
  }

  str(p: readonly Seg[], v: unknown, def: string, check?: (s: string) => string | null): string {
    if (v === undefined || v === null) return def;
    if (typeof v !== 'string') {
      this.fail(p, `must be a string, got ${describe(v)}${typeof v === 'number' || typeof v === 'boolean' ? ' (quote it in YAML)' : ''}`);
    }
    if (check) {
      const problem = check(v);
      if (problem) this.fail(p, problem);
    }
    return v;
  }

  int(p: readonly Seg[], v: unknown, def: number, min: number, max: number): number {
    if (v === undefined || v === null) return def;
    if (typeof v !== 'number' || !Number.isInteger(v)) this.fail(p, `must be an integer, got ${describe(v)}`);
    if (v < min || v > max) this.fail(p, `must be between ${min} and ${max}, got ${v}`);
    return v;
  }

  num(p: readonly Seg[], v: unknown, def: number, min: number, max: number): number {
    if (v === undefined || v === null) return def;
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail(p, `must be a number, got ${describe(v)}`);
    if (v < min || v > max) this.fail(p, `must be between ${min} and ${max}, got ${v}`);
    return v;
  }

  bool(p: readonly Seg[], v: unknown, def: boolean): boolean {
    if (v === undefined || v === null) return def;
    if (typeof v !== 'boolean') {
      const hint = typeof v === 'string' && /^(yes|no|on|off|y|n)$/i.test(v) ? ' (YAML 1.2: write true or false)' : '';
      this.fail(p, `must be true or false, got ${describe(v)}${hint}`);
    }
    return v;
  }

  oneOf<T extends string>(p: readonly Seg[], v: unknown, def: T, allowed: readonly T[]): T {
    if (v === undefined || v === null) return def;
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
      this.fail(p, `must be one of ${allowed.join(', ')}${typeof v === 'string' ? `, got '${v}'` : `, got ${describe(v)}`}`);
    }
    return v as T;
  }

  /** A list of strings, or a comma-separated string. Empty items are dropped, duplicates removed. */
  strList(p: readonly Seg[], v: unknown, def: readonly string[], opts: { comma: boolean; check?: (s: string) => string | null }): string[] {
    if (v === undefined || v === null) return [...def];
    let items: unknown[];
    if (typeof v === 'string') items = opts.comma ? v.split(',') : [v];
    else if (Array.isArray(v)) items = v;
    else this.fail(p, `must be a list${opts.comma ? ' or a comma-separated string' : ' or a string'}, got ${describe(v)}`);
    const out: string[] = [];
    items.forEach((item, i) => {
      const ip = Array.isArray(v) ? [...p, i] : p;
      if (typeof item !== 'string') this.fail(ip, `must be a string, got ${describe(item)}`);
      const s = opts.comma ? item.trim() : item;
      if (s === '') {
        if (Array.isArray(v)) this.fail(ip, 'must not be empty');
        return;
      }
      if (opts.check) {
        const problem = opts.check(s);
        if (problem) this.fail(ip, problem);
      }
      if (!out.includes(s)) out.push(s);
    });
    return out;
  }

  // --- the document -------------------------------------------------------------------------

  build(raw: Raw, baseDir: string, ifaces: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>): PatchbayConfig {
    const top = this.section([], raw, [
      'server_id', 'system_name', 'http', 'ari', 'dirs', 'dialplan', 'logging', 'language',
      'max_channels', 'local_max_depth', 'max_open_files', 'max_load', 'config_objects',
    ]);

    // http
    const h = this.section(['http'], top.http, ['bind', 'port', 'body_limit_bytes']);
    const bind = this.str(['http', 'bind'], h.bind, '127.0.0.1', checkBind);
    const http = Object.freeze({
      bind,
      port: this.int(['http', 'port'], h.port, 8088, 0, 65535),
      bodyLimitBytes: this.int(['http', 'body_limit_bytes'], h.body_limit_bytes, 1024 * 1024, 1, 1024 * 1024 * 1024),
    });

    // ari
    const a = this.section(['ari'], top.ari, [
      'users', 'auth_realm', 'channelvars', 'allowed_origins', 'pretty', 'developer_mode', 'websocket', 'failed_logins',
    ]);
    const users = this.users(a.users);
    const ws = this.section(['ari', 'websocket'], a.websocket, ['ping_interval_seconds', 'max_queued_messages', 'max_queued_bytes']);
    const fl = this.section(['ari', 'failed_logins'], a.failed_logins, ['max_per_address', 'window_seconds', 'block_seconds', 'tracked_addresses']);
    const ari = Object.freeze({
      users,
      authRealm: this.str(['ari', 'auth_realm'], a.auth_realm, 'Asterisk REST Interface', (s) =>
        s.trim() === '' ? 'must not be empty' : /["\\\x00-\x1f\x7f]/.test(s) ? 'must not contain quotes, backslashes or control characters' : null),
      channelvars: Object.freeze(this.strList(['ari', 'channelvars'], a.channelvars, [], {
        comma: true,
        check: (s) => (/[\s\x00-\x1f\x7f]/.test(s) ? 'must not contain whitespace or control characters' : null),
      })),
      allowedOrigins: Object.freeze(this.strList(['ari', 'allowed_origins'], a.allowed_origins, [], {
        comma: true,
        check: checkOrigin,
      }).map((s) => (s === '*' ? s : s.toLowerCase()))),
      pretty: this.bool(['ari', 'pretty'], a.pretty, false),
      developerMode: this.bool(['ari', 'developer_mode'], a.developer_mode, false),
      websocket: Object.freeze({
        pingIntervalSeconds: this.int(['ari', 'websocket', 'ping_interval_seconds'], ws.ping_interval_seconds, 30, 0, 86400),
        maxQueuedMessages: this.int(['ari', 'websocket', 'max_queued_messages'], ws.max_queued_messages, 50_000, 1, 10_000_000),
        maxQueuedBytes: this.int(['ari', 'websocket', 'max_queued_bytes'], ws.max_queued_bytes, 16 * 1024 * 1024, 64 * 1024, 2 ** 31 - 1),
      }),
      failedLogins: Object.freeze({
        maxPerAddress: this.int(['ari', 'failed_logins', 'max_per_address'], fl.max_per_address, 10, 0, 1_000_000),
        windowSeconds: this.int(['ari', 'failed_logins', 'window_seconds'], fl.window_seconds, 60, 1, 86400),
        blockSeconds: this.int(['ari', 'failed_logins', 'block_seconds'], fl.block_seconds, 60, 1, 86400),
        trackedAddresses: this.int(['ari', 'failed_logins', 'tracked_addresses'], fl.tracked_addresses, 10_000, 1, 10_000_000),
      }),
    });

    // dirs
    const d = this.section(['dirs'], top.dirs, ['data', 'logs', 'recordings', 'sounds', 'moh']);
    const nonEmpty = (s: string): string | null => (s.trim() === '' ? 'must not be empty' : s.includes('\0') ? 'must not contain NUL' : null);
    const data = path.resolve(baseDir, this.str(['dirs', 'data'], d.data, './data', nonEmpty));
    const dirPath = (key: string, def: string): string => path.resolve(baseDir, this.str(['dirs', key], d[key], def, nonEmpty));
    const dirs = Object.freeze({
      data,
      logs: dirPath('logs', path.join(data, 'logs')),
      recordings: dirPath('recordings', path.join(data, 'recordings')),
      sounds: Object.freeze(
        this.strList(['dirs', 'sounds'], d.sounds, [path.join(data, 'sounds'), ...DEFAULT_SYSTEM_SOUNDS], { comma: false, check: nonEmpty })
          .map((s) => path.resolve(baseDir, s))
          .filter((s, i, all) => all.indexOf(s) === i),
      ),
      moh: dirPath('moh', path.join(data, 'moh')),
    });

    // dialplan
    const dp = this.section(['dialplan'], top.dialplan, ['file']);
    let dialplanFile: string | null = null;
    if (dp.file !== undefined && dp.file !== null) {
      dialplanFile = path.resolve(baseDir, this.str(['dialplan', 'file'], dp.file, '', nonEmpty));
      let st: fs.Stats | undefined;
      try {
        st = fs.statSync(dialplanFile);
      } catch (err) {
        this.fail(['dialplan', 'file'], `cannot read ${dialplanFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      if (!st.isFile()) this.fail(['dialplan', 'file'], `${dialplanFile} is not a regular file`);
    }

    // logging
    const lg = this.section(['logging'], top.logging, ['level', 'console', 'max_log_channels']);
    const logging = Object.freeze({
      level: this.oneOf(['logging', 'level'], lg.level, 'info', LOG_LEVELS),
      console: this.bool(['logging', 'console'], lg.console, true),
      maxLogChannels: this.int(['logging', 'max_log_channels'], lg.max_log_channels, 64, 2, 100_000),
    });

    const systemName = this.str(['system_name'], top.system_name, os.hostname() || 'patchbay', (s) =>
      s.trim() === '' ? 'must not be empty' : /[\x00-\x1f\x7f]/.test(s) ? 'must not contain control characters' : null);
    const language = this.str(['language'], top.language, 'en', (s) =>
      /^[A-Za-z0-9_-]{1,32}$/.test(s) ? null : `must be a language code such as en or en_GB (letters, digits, _ and -), got '${s}'`);

    const usingDefaultPassword = users.some((u) => u.name === DEFAULT_USER.name && verifyPassword(u, DEFAULT_USER.password));
    if (usingDefaultPassword && !isLoopback(bind)) {
      this.fail(['http', 'bind'], `the default password may only be used on a loopback address (127.0.0.0/8, ::1, localhost), got '${bind}'; change the password of user 'asterisk' in ari.users or bind to loopback`);
    }

    let serverId: string;
    if (top.server_id !== undefined && top.server_id !== null) {
      serverId = this.str(['server_id'], top.server_id, '', (s) =>
        SERVER_ID_RE.test(s) ? null : `must look like a MAC address xx:xx:xx:xx:xx:xx (hex), got '${s}'`).toLowerCase();
    } else {
      serverId = this.defaultServerId(data, ifaces);
    }

    return {
      serverId,
      systemName,
      http,
      ari,
      dirs,
      dialplan: Object.freeze({ file: dialplanFile }),
      logging,
      language,
      maxChannels: this.int(['max_channels'], top.max_channels, 0, 0, 2 ** 31 - 1),
      localMaxDepth: this.int(['local_max_depth'], top.local_max_depth, 20, 0, 2 ** 31 - 1),
      maxOpenFiles: this.int(['max_open_files'], top.max_open_files, 0, 0, 2 ** 31 - 1),
      maxLoad: this.num(['max_load'], top.max_load, 0, 0, 1_000_000),
      configObjects: this.configObjects(top.config_objects),
      usingDefaultPassword,
      configFile: this.file,
    };
  }

  private users(v: unknown): readonly AriUser[] {
    const p = ['ari', 'users'];
    if (v === undefined || v === null) return Object.freeze([DEFAULT_USER]);
    if (!Array.isArray(v)) this.fail(p, `must be a list of users, got ${describe(v)}`);
    const seen = new Set<string>();
    const out = v.map((item, i): AriUser => {
      const up = [...p, i];
      if (item === null || item === undefined) this.fail(up, 'must be a mapping with name and password');
      const u = this.section(up, item, ['name', 'password', 'password_format', 'read_only']);
      if (u.name === undefined || u.name === null) this.fail([...up, 'name'], 'is required');
      const name = this.str([...up, 'name'], u.name, '', (s) =>
        s === '' ? 'must not be empty'
          : s.includes(':') ? "must not contain ':' (HTTP Basic auth splits user and password at the first ':')"
            : /[\x00-\x1f\x7f]/.test(s) ? 'must not contain control characters' : null);
      if (seen.has(name)) this.fail([...up, 'name'], `duplicate user '${name}'`);
      seen.add(name);
      const passwordFormat = this.oneOf([...up, 'password_format'], u.password_format, 'plain', ['plain', 'crypt'] as const);
      if (u.password === undefined || u.password === null) this.fail([...up, 'password'], 'is required');
      const password = this.str([...up, 'password'], u.password, '', (s) =>
        s === '' ? 'must not be empty' : passwordFormat === 'crypt' ? checkCryptHash(s) : null);
      const readOnly = this.bool([...up, 'read_only'], u.read_only, false);
      return Object.freeze({ name, password, passwordFormat, readOnly });
    });
    return Object.freeze(out);
  }

  private configObjects(v: unknown): ConfigObjects {
    const root = ['config_objects'];
    const level = (p: readonly Seg[], x: unknown, what: string): Raw => {
      if (x === undefined || x === null) return {};
      if (!isPlainObject(x)) this.fail(p, `must be a mapping of ${what}, got ${describe(x)}`);
      for (const k of Object.keys(x)) {
        if (k.trim() === '' || k.includes('/') || RESERVED_NAMES.has(k)) this.fail([...p, k], `'${k}' is not allowed as a ${what.replace(/s$/, '')} name`);
      }
      return x;
    };
    const out: Record<string, Record<string, Record<string, Record<string, string>>>> = {};
    for (const [cls, types] of Object.entries(level(root, v, 'config classes'))) {
      const outTypes: Record<string, Record<string, Record<string, string>>> = {};
      for (const [type, ids] of Object.entries(level([...root, cls], types, 'object types'))) {
        const outIds: Record<string, Record<string, string>> = {};
        for (const [id, fields] of Object.entries(level([...root, cls, type], ids, 'object ids'))) {
          const outFields: Record<string, string> = {};
          for (const [field, value] of Object.entries(level([...root, cls, type, id], fields, 'fields'))) {
            if (typeof value === 'string') outFields[field] = value;
            else if (typeof value === 'number' || typeof value === 'boolean') outFields[field] = String(value);
            else this.fail([...root, cls, type, id, field], `must be a string, number or boolean, got ${describe(value)}`);
          }
          outIds[id] = Object.freeze(outFields);
        }
        outTypes[type] = Object.freeze(outIds);
      }
      out[cls] = Object.freeze(outTypes);
    }
    return Object.freeze(out);
  }

  private defaultServerId(dataDir: string, ifaces: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>): string {
    const file = path.join(dataDir, SERVER_ID_FILE);
    // An id stored earlier wins, so the id stays stable even if interfaces come and go.
    try {
      const stored = fs.readFileSync(file, 'utf8').trim();
      if (SERVER_ID_RE.test(stored)) return stored.toLowerCase();
      this.fail(['server_id'], `${file} does not hold a valid id (xx:xx:xx:xx:xx:xx); fix or delete it`);
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.fail(['server_id'], `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
    }
    for (const infos of Object.values(ifaces())) {
      for (const info of infos ?? []) {
        if (!info.internal && SERVER_ID_RE.test(info.mac) && info.mac !== '00:00:00:00:00:00') return info.mac.toLowerCase();
      }
    }
    const bytes = crypto.randomBytes(6);
    bytes[0] = (bytes[0]! | 0x02) & 0xfe; // locally administered, unicast
    const id = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':');
    try {
      fs.mkdirSync(dataDir, { recursive: true });
      fs.writeFileSync(file, id + '\n', { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return this.defaultServerId(dataDir, () => ({}));
      this.fail(['server_id'], `no network interface MAC found and cannot store a generated id in ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}; set server_id`);
    }
    return id;
  }
}

const RESERVED_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

function checkBind(s: string): string | null {
  if (s === '') return 'must not be empty';
  if (s.startsWith('[')) return 'write IPv6 addresses without brackets, e.g. ::1';
  if (net.isIP(s)) return null;
  if (/^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/.test(s)) return null;
  return `must be an IP address or host name, got '${s}'`;
}

function checkOrigin(s: string): string | null {
  if (s === '*') return null;
  if (/^[a-z][a-z0-9+.-]*:\/\/[^\s/?#]+$/i.test(s)) return null;
  return `must be * or an origin scheme://host[:port] with no path or trailing slash, got '${s}'`;
}

/** True for 127.0.0.0/8, ::1 (any spelling, incl. IPv4-mapped 127.x) and localhost. */
export function isLoopback(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (net.isIPv4(h)) return h.split('.')[0] === '127';
  if (net.isIPv6(h)) {
    let canonical: string;
    try {
      canonical = new URL(`http://[${h}]/`).hostname.slice(1, -1);
    } catch {
      return false;
    }
    return canonical === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(canonical);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Passwords: the format only (checking a password against a user is src/ari/passwords.ts).

const CRYPT_CHARS = '[./0-9A-Za-z]';
const SHA_CRYPT_RE = new RegExp(`^\\$([56])\\$(?:rounds=([1-9][0-9]*)\\$)?(${CRYPT_CHARS}{0,16})\\$(${CRYPT_CHARS}+)$`);
const MD5_CRYPT_RE = new RegExp(`^\\$1\\$([^$]{0,8})\\$(${CRYPT_CHARS}{22})$`);

function checkCryptHash(s: string): string | null {
  const sha = SHA_CRYPT_RE.exec(s);
  if (sha) {
    const expected = sha[1] === '5' ? 43 : 86;
    if (sha[4]!.length !== expected) return `malformed $${sha[1]}$ crypt hash (digest must be ${expected} characters)`;
    if (sha[2] !== undefined) {
      const rounds = Number(sha[2]);
      if (rounds < 1000 || rounds > 1_000_000) return 'crypt rounds must be between 1000 and 1000000 (every request re-verifies)';
    }
    return null;
  }
  if (MD5_CRYPT_RE.test(s)) return null;
  return 'unsupported or malformed crypt hash: use $6$ (SHA-512), $5$ (SHA-256) or $1$ (MD5), e.g. from `openssl passwd -6`';
}

// ---------------------------------------------------------------------------------------------
// Helpers

function isPlainObject(v: unknown): v is Raw {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

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

function setIn(target: Raw, p: readonly string[], value: unknown): void {
  let node = target;
  for (const seg of p.slice(0, -1)) {
    if (!isPlainObject(node[seg])) node[seg] = {};
    node = node[seg] as Raw;
  }
  node[p[p.length - 1]!] = value;
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

function fmtPath(p: readonly Seg[]): string {
  let s = '';
  for (const seg of p) s += typeof seg === 'number' ? `[${seg}]` : s === '' ? seg : `.${seg}`;
  return s;
}

function describe(v: unknown): string {
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
