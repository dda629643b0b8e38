// `asterisk_config_dir`: an Asterisk configuration directory read as it is, so that migrating is
// copying /etc/asterisk. What Patchbay understands in asterisk.conf, http.conf, ari.conf, websocket_client.conf,
// extensions.conf, pjsip.conf, musiconhold.conf, cdr.conf, cdr_csv.conf and cel.conf becomes a layer of YAML-shaped settings that
// the YAML file, the environment and overrides take precedence over. Every option, section or
// file it does not understand is named in one warning line (`ari.conf:7: ...`), never dropped
// silently. Never throws on the files' contents: a file that cannot be read or parsed is a warning.
// indications.conf is read by the core as it starts (core/indications-conf.ts), not into settings;
// so is res_parking.conf (core/parking/parking-conf.ts).
import fs from 'node:fs';
import path from 'node:path';
import { readConfigSections, type ConfigSection } from './conf/reader.ts';
import { DialplanSyntaxError } from './conf/syntax-error.ts';
import type { Raw } from './schema.ts';
import { readCdrConf, readCelConf } from './asterisk-records-conf.ts';

/** Largest configuration file read from the directory. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;
/** Most entries in one file, after template inheritance. */
const MAX_ENTRIES = 100_000;
/** Most warning lines kept (a huge hostile file must not flood the log). */
const MAX_WARNINGS = 500;

/** The files Patchbay reads from the directory; any other `*.conf` there is named as not read. */
export const READ_FILES = ['asterisk.conf', 'http.conf', 'ari.conf', 'acl.conf', 'websocket_client.conf', 'chan_websocket.conf', 'extensions.conf', 'pjsip.conf', 'musiconhold.conf', 'cdr.conf', 'cdr_csv.conf', 'cel.conf', 'indications.conf', 'res_parking.conf', 'features.conf'] as const;

export interface AsteriskDirImport {
  /** YAML-shaped settings (snake_case keys), to be merged beneath the YAML file. */
  readonly layer: Raw;
  /** Where each imported setting came from (`http.port` → `http.conf:4`), for error messages. */
  readonly sources: Map<string, string>;
  /** One line per thing not understood. */
  readonly warnings: string[];
}

interface Entry {
  readonly name: string;
  readonly value: string;
  readonly at: string;
}

class Importer {
  readonly layer: Raw = Object.create(null) as Raw;
  readonly sources = new Map<string, string>();
  readonly warnings: string[] = [];

  constructor(readonly dir: string) {}

  warn(line: string): void {
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push(line);
    else if (this.warnings.length === MAX_WARNINGS) this.warnings.push(`${this.dir}: more warnings left out`);
  }

  set(key: string, value: unknown, at: string): void {
    const segments = key.split('.');
    let node = this.layer;
    for (const segment of segments.slice(0, -1)) {
      const next = node[segment];
      if (typeof next !== 'object' || next === null || Array.isArray(next)) node[segment] = Object.create(null) as Raw;
      node = node[segment] as Raw;
    }
    node[segments[segments.length - 1]!] = value;
    this.sources.set(key, at);
  }

  /** The sections of a file, or undefined (with a warning) when it is missing, too big or broken. */
  sections(file: string): ConfigSection[] | undefined {
    const full = path.join(this.dir, file);
    let text: string;
    try {
      const stat = fs.statSync(full);
      if (!stat.isFile()) return undefined;
      if (stat.size > MAX_FILE_BYTES) {
        this.warn(`${file}: larger than ${MAX_FILE_BYTES} bytes; not read`);
        return undefined;
      }
      text = fs.readFileSync(full, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.warn(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
      return undefined;
    }
    try {
      return readConfigSections(text, file, {
        maxEntries: MAX_ENTRIES,
        onDirective: (directive, where) => this.warn(`${file}:${where.line}: ${directive.split(/\s/, 1)[0]!.slice(0, 40)} is not supported; line ignored`),
      });
    } catch (error) {
      this.warn(error instanceof DialplanSyntaxError ? `${error.message}; file not read` : `${file}: ${(error as Error).message}; file not read`);
      return undefined;
    }
  }
}

function entriesOf(section: ConfigSection, file: string): Entry[] {
  return section.entries.map((entry) => ({ name: entry.name.trim().toLowerCase(), value: entry.value.trim(), at: `${file}:${entry.line}` }));
}

/** Asterisk's true values (`ast_true`): yes, true, y, t, 1, on. */
function truthy(value: string): boolean {
  return /^(yes|true|y|t|1|on)$/i.test(value.trim());
}

function integerOf(value: string): number | string {
  return /^-?\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : value;
}

/** A directory Asterisk names, if it exists and (when `writable`) can be written here. */
function usableDirectory(dir: string, writable: boolean): boolean {
  try {
    if (!fs.statSync(dir).isDirectory()) return false;
    fs.accessSync(dir, writable ? fs.constants.R_OK | fs.constants.W_OK : fs.constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

// ---- asterisk.conf ---------------------------------------------------------------------------

function readAsteriskConf(im: Importer): string | undefined {
  const sections = im.sections('asterisk.conf');
  let dataDir: string | undefined;
  // A stock asterisk.conf names a dozen directories Patchbay has no use for: one line for them all.
  const unusedDirectories: string[] = [];
  let unusedAt: string | undefined;
  for (const section of sections ?? []) {
    const kind = section.name.toLowerCase();
    for (const { name, value, at } of entriesOf(section, 'asterisk.conf')) {
      if (kind === 'directories') {
        switch (name) {
          case 'astdatadir':
            dataDir = value;
            if (usableDirectory(path.join(value, 'sounds'), false)) im.set('dirs.sounds', [path.join(value, 'sounds')], at);
            else im.warn(`${at}: astdatadir ${value}: no readable sounds directory here; the default sound directories stay`);
            break;
          case 'astspooldir':
            if (usableDirectory(path.join(value, 'recording'), true)) im.set('dirs.recordings', path.join(value, 'recording'), at);
            else im.warn(`${at}: astspooldir ${value}: ${path.join(value, 'recording')} is not a writable directory here; recordings stay in the data directory`);
            break;
          case 'astlogdir':
            if (usableDirectory(value, true)) im.set('dirs.logs', value, at);
            else im.warn(`${at}: astlogdir ${value} is not a writable directory here; logs stay in the data directory`);
            break;
          case 'astetcdir':
            break; // the directory being read
          default:
            unusedDirectories.push(name);
            unusedAt ??= `asterisk.conf:${section.line}`;
        }
      } else if (kind === 'options') {
        switch (name) {
          case 'maxcalls':
            im.set('max_channels', integerOf(value), at);
            break;
          case 'maxload':
            im.set('max_load', Number.isFinite(Number(value)) ? Number(value) : value, at);
            break;
          case 'maxfiles':
            im.set('max_open_files', integerOf(value), at);
            break;
          case 'defaultlanguage':
            im.set('language', value, at);
            break;
          case 'systemname':
            im.set('system_name', value, at);
            break;
          case 'entityid':
            im.set('server_id', value.toLowerCase(), at);
            break;
          default:
            im.warn(`${at}: option ${name} is not supported by Patchbay`);
        }
      } else {
        im.warn(`asterisk.conf:${section.line}: section [${section.name}] is not supported by Patchbay`);
        break;
      }
    }
  }
  if (unusedAt) im.warn(`${unusedAt}: [directories] ${unusedDirectories.join(', ')}: not used by Patchbay (astdatadir, astspooldir and astlogdir are)`);
  return dataDir;
}

// ---- http.conf -------------------------------------------------------------------------------

function readHttpConf(im: Importer): void {
  for (const section of im.sections('http.conf') ?? []) {
    if (section.name.toLowerCase() !== 'general') {
      im.warn(`http.conf:${section.line}: section [${section.name}] is not supported by Patchbay`);
      continue;
    }
    for (const { name, value, at } of entriesOf(section, 'http.conf')) {
      switch (name) {
        case 'enabled':
          if (!truthy(value)) im.warn(`${at}: enabled=${value}: Patchbay always serves HTTP (ARI needs it)`);
          break;
        case 'bindaddr':
          im.set('http.bind', value, at);
          break;
        case 'bindport':
          im.set('http.port', integerOf(value), at);
          break;
        case 'prefix':
          im.set('http.prefix', value, at);
          break;
        default:
          im.warn(`${at}: option ${name} is not supported by Patchbay`);
      }
    }
  }
}

// ---- ari.conf --------------------------------------------------------------------------------

function readAriConf(im: Importer): void {
  const users: Raw[] = [];
  let usersAt: string | undefined;
  const outbounds: Raw[] = [];
  let outboundsAt: string | undefined;
  const sections = im.sections('ari.conf');
  for (const section of sections ?? []) {
    const entries = entriesOf(section, 'ari.conf');
    if (section.name.toLowerCase() === 'general') {
      for (const { name, value, at } of entries) {
        switch (name) {
          case 'enabled':
            if (!truthy(value)) im.warn(`${at}: enabled=${value}: Patchbay always serves ARI`);
            break;
          case 'pretty':
            im.set('ari.pretty', truthy(value), at);
            break;
          case 'allowed_origins':
            im.set('ari.allowed_origins', value, at);
            break;
          case 'auth_realm':
            im.set('ari.auth_realm', value, at);
            break;
          case 'channelvars':
            im.set('ari.channelvars', value, at);
            break;
          default:
            im.warn(`${at}: option ${name} is not supported by Patchbay`);
        }
      }
      continue;
    }
    const type = entries.find((entry) => entry.name === 'type')?.value.toLowerCase();
    if (type === 'outbound_websocket') {
      const outbound = readOutboundWebSocket(im, section.name, entries);
      outbounds.push(outbound);
      outboundsAt ??= `ari.conf:${section.line}`;
      continue;
    }
    if (type !== 'user') {
      im.warn(`ari.conf:${section.line}: [${section.name}] type=${type ?? '(none)'} is not supported by Patchbay; section ignored`);
      continue;
    }
    const user: Raw = Object.create(null) as Raw;
    user.name = section.name;
    const rules = new RuleOrder(im, `ari.conf:${section.line}`);
    for (const { name, value, at } of entries) {
      switch (name) {
        case 'type':
          break;
        case 'permit':
        case 'deny':
          rules.add(user, name, value);
          break;
        case 'acl':
          user.acl = [...((user.acl as string[] | undefined) ?? []), ...value.split(',').map((n) => n.trim()).filter(Boolean)];
          break;
        case 'password':
          user.password = value;
          break;
        case 'password_format':
          user.password_format = value.toLowerCase();
          break;
        case 'read_only':
          user.read_only = truthy(value);
          break;
        default:
          im.warn(`${at}: user option ${name} is not supported by Patchbay`);
      }
    }
    users.push(user);
    usersAt ??= `ari.conf:${section.line}`;
  }
  if (usersAt) im.set('ari.users', users, usersAt);
  // As in Asterisk, an ari.conf without a type=user section lets nobody in: the embedded default
  // user is not added behind the administrator's back (the server says so at start-up).
  else if (sections !== undefined) im.set('ari.users', [], 'ari.conf');
  if (outboundsAt) im.set('ari.outbound_websockets', outbounds, outboundsAt);
}

/** An ari.conf `type=outbound_websocket` section as an `ari.outbound_websockets` entry. */
function readOutboundWebSocket(im: Importer, name: string, entries: readonly Entry[]): Raw {
  const outbound: Raw = Object.create(null) as Raw;
  outbound.name = name;
  for (const { name: option, value, at } of entries) {
    switch (option) {
      case 'type':
        break;
      case 'websocket_client_id':
      case 'local_ari_user':
        outbound[option] = value;
        break;
      case 'apps':
        outbound.apps = value;
        break;
      case 'subscribe_all':
        outbound.subscribe_all = truthy(value);
        break;
      default:
        im.warn(`${at}: outbound_websocket option ${option} is not supported by Patchbay`);
    }
  }
  return outbound;
}

// ---- chan_websocket.conf ---------------------------------------------------------------------

function readChanWebsocketConf(im: Importer): void {
  for (const section of im.sections('chan_websocket.conf') ?? []) {
    if (section.name.toLowerCase() !== 'global' && section.name.toLowerCase() !== 'general') {
      im.warn(`chan_websocket.conf:${section.line}: section [${section.name}] is not supported by Patchbay`);
      continue;
    }
    for (const { name, value, at } of entriesOf(section, 'chan_websocket.conf')) {
      if (name === 'control_message_format') im.set('chan_websocket.control_message_format', value.toLowerCase(), at);
      else if (name !== 'type') im.warn(`${at}: option ${name} is not supported by Patchbay`);
    }
  }
}

// ---- websocket_client.conf -------------------------------------------------------------------

const CLIENT_STRINGS = new Set(['uri', 'protocols', 'username', 'password', 'ca_list_file', 'ca_list_path', 'cert_file', 'priv_key_file', 'proxy_host', 'proxy_username', 'proxy_password']);
const CLIENT_INTEGERS = new Set(['connection_timeout', 'reconnect_interval', 'reconnect_attempts', 'tcp_keepalive_time', 'tcp_keepalive_interval', 'tcp_keepalive_probes', 'pingpong_interval', 'pingpong_probes']);
const CLIENT_BOOLEANS = new Set(['tls_enabled', 'verify_server_cert', 'verify_server_hostname', 'enable_tcp_keepalives', 'enable_pingpongs']);

/** websocket_client.conf `type=websocket_client` sections as `websocket_clients` entries. */
function readWebSocketClientConf(im: Importer): void {
  const clients: Raw[] = [];
  let clientsAt: string | undefined;
  for (const section of im.sections('websocket_client.conf') ?? []) {
    const entries = entriesOf(section, 'websocket_client.conf');
    const type = entries.find((entry) => entry.name === 'type')?.value.toLowerCase();
    if (type !== 'websocket_client') {
      im.warn(`websocket_client.conf:${section.line}: [${section.name}] type=${type ?? '(none)'} is not supported by Patchbay; section ignored`);
      continue;
    }
    const client: Raw = Object.create(null) as Raw;
    client.name = section.name;
    for (const { name, value, at } of entries) {
      if (name === 'type') continue;
      if (name === 'connection_type') client.connection_type = value.toLowerCase();
      else if (CLIENT_STRINGS.has(name)) client[name] = value;
      else if (CLIENT_INTEGERS.has(name)) client[name] = integerOf(value);
      else if (CLIENT_BOOLEANS.has(name)) client[name] = truthy(value);
      else im.warn(`${at}: websocket_client option ${name} is not supported by Patchbay`);
    }
    clients.push(client);
    clientsAt ??= `websocket_client.conf:${section.line}`;
  }
  if (clientsAt) im.set('websocket_clients', clients, clientsAt);
}

/**
 * Asterisk applies permit/deny lines in the order written; Patchbay's settings hold one `permit`
 * and one `deny` list, applied in the order their keys appear. Lines that alternate more than once
 * cannot keep their order: that is said in a warning line.
 */
class RuleOrder {
  #last: string | undefined;
  #switches = 0;
  #warned = false;

  constructor(
    private readonly im: Importer,
    private readonly where: string,
  ) {}

  add(target: Raw, kind: 'permit' | 'deny', value: string): void {
    if (this.#last !== undefined && this.#last !== kind) this.#switches += 1;
    this.#last = kind;
    if (this.#switches > 1 && !this.#warned) {
      this.#warned = true;
      this.im.warn(`${this.where}: permit and deny lines alternate more than once; Patchbay applies all of one kind, then all of the other, in the order each first appears`);
    }
    target[kind] = [...((target[kind] as string[] | undefined) ?? []), ...value.split(',').map((rule) => rule.trim()).filter(Boolean)];
  }
}

// ---- acl.conf --------------------------------------------------------------------------------

function readAclConf(im: Importer): void {
  const acls: Raw = Object.create(null) as Raw;
  let aclsAt: string | undefined;
  for (const section of im.sections('acl.conf') ?? []) {
    const acl: Raw = Object.create(null) as Raw;
    const rules = new RuleOrder(im, `acl.conf:${section.line}`);
    for (const { name, value, at } of entriesOf(section, 'acl.conf')) {
      if (name === 'permit' || name === 'deny') rules.add(acl, name, value);
      else im.warn(`${at}: option ${name} is not supported by Patchbay`);
    }
    acls[section.name] = acl;
    aclsAt ??= `acl.conf:${section.line}`;
  }
  if (aclsAt) im.set('ari.acls', acls, aclsAt);
}

// ---- musiconhold.conf ------------------------------------------------------------------------

function readMusicOnHoldConf(im: Importer, dataDir: string | undefined): void {
  const classes: Raw = Object.create(null) as Raw;
  let classesAt: string | undefined;
  for (const section of im.sections('musiconhold.conf') ?? []) {
    const entries = entriesOf(section, 'musiconhold.conf');
    if (section.name.toLowerCase() === 'general') {
      for (const { name, at } of entries) im.warn(`${at}: option ${name} is not supported by Patchbay`);
      continue;
    }
    const mode = entries.find((entry) => entry.name === 'mode')?.value.toLowerCase() ?? 'files';
    const directory = entries.find((entry) => entry.name === 'directory')?.value;
    if (mode !== 'files' || !directory) {
      im.warn(`musiconhold.conf:${section.line}: [${section.name}] mode=${mode}${directory ? '' : ' without directory='} is not supported by Patchbay (only mode=files with a directory); class left out`);
      continue;
    }
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(section.name) || section.name === '.' || section.name === '..') {
      im.warn(`musiconhold.conf:${section.line}: class name [${section.name.slice(0, 64)}] is not one Patchbay takes (1–64 letters, digits, _, - or .); class left out`);
      continue;
    }
    // Asterisk resolves a relative directory against astdatadir.
    const resolved = path.isAbsolute(directory) ? directory : path.join(dataDir ?? '/var/lib/asterisk', directory);
    classes[section.name] = resolved;
    classesAt ??= `musiconhold.conf:${section.line}`;
    for (const { name, value, at } of entries) {
      if (name === 'mode' || name === 'directory') continue;
      if (name === 'sort' && value.toLowerCase() === 'alpha') continue;
      im.warn(`${at}: class option ${name} is not supported by Patchbay (files play in name order)`);
    }
  }
  if (classesAt) im.set('moh_classes', classes, classesAt);
}

// ---- the directory ---------------------------------------------------------------------------

/** Reads what Patchbay understands from an Asterisk configuration directory. */
export function readAsteriskConfigDir(dir: string): AsteriskDirImport {
  const im = new Importer(dir);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    im.warn(`${dir}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    return im;
  }
  const dataDir = readAsteriskConf(im);
  readHttpConf(im);
  readAriConf(im);
  readAclConf(im);
  readWebSocketClientConf(im);
  readChanWebsocketConf(im);
  if (names.includes('extensions.conf')) im.set('dialplan.file', path.join(dir, 'extensions.conf'), 'extensions.conf');
  if (names.includes('pjsip.conf')) im.set('sip.pjsip_conf', path.join(dir, 'pjsip.conf'), 'pjsip.conf');
  readMusicOnHoldConf(im, dataDir);
  readCdrConf(im);
  readCelConf(im);
  const unread = names.filter((name) => name.endsWith('.conf') && !(READ_FILES as readonly string[]).includes(name)).sort();
  if (unread.length > 0) im.warn(`${dir}: not read by Patchbay: ${unread.slice(0, 200).join(', ')}${unread.length > 200 ? ', …' : ''}`);
  return im;
}
