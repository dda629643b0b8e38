// Turns raw `{type, id, fields}` objects — from pjsip.conf, the YAML `config_objects` or a dynamic
// configuration PUT — into typed res_pjsip objects, with one validation for all three. Bad values are
// errors (one line each, naming where, the object and the key); options Patchbay does not implement
// are warnings (one line each) and are otherwise ignored. Never throws.
import { isSdpCodec, type SdpCodec } from '../../../sip/sdp/offer-answer.ts';
import type {
  DtmfMode,
  IdentifierMethod,
  IdentifyBy,
  PjsipAor,
  PjsipAuth,
  PjsipConfig,
  PjsipDomainAlias,
  PjsipEndpoint,
  PjsipGlobal,
  PjsipIdentify,
  PjsipObject,
  PjsipRegistration,
  PjsipTransport,
  RawField,
  RawPjsipObject,
} from './types.ts';
import {
  isHostName,
  parseBool,
  parseCallerId,
  parseChoice,
  parseDecimal,
  parseHostPort,
  parseIdentifyMatch,
  parseInteger,
  parseNetwork,
  parseSipUri,
  shown,
  splitList,
  type IdentifyMatch,
  type IpNetwork,
  type Parsed,
} from './values.ts';
import { isIP } from 'node:net';

export interface BuildResult<T> {
  readonly errors: string[];
  readonly warnings: string[];
  readonly value?: T;
}

const MAX_ID_LENGTH = 256;
const MAX_VALUE_LENGTH = 4096;
const MAX_FIELDS = 512;
const MAX_OBJECTS = 100_000;
const MAX_LIST_ITEMS = 256;
/** Lines kept per list; beyond, one line says how many more there were. */
const MAX_MESSAGES = 1000;

/** Codec names Asterisk knows; those Patchbay cannot carry are warned about, others are errors. */
const ASTERISK_CODECS = new Set(
  (
    'ulaw alaw gsm g726 g726aal2 adpcm slin slin12 slin16 slin24 slin32 slin44 slin48 slin96 slin192 lpc10 g729 speex speex16 ' +
    'speex32 ilbc g722 siren7 siren14 testlaw g719 opus jpeg png h261 h263 h263p h264 h265 mpeg4 vp8 vp9 red t140 t38 silk silk8 ' +
    'silk12 silk16 silk24 codec2'
  ).split(' '),
);
const SUPPORTED_CODECS: readonly SdpCodec[] = ['ulaw', 'alaw'];

/** Types Asterisk has that Patchbay ignores (a warning, no error). */
const IGNORED_TYPES = new Set([
  'system',
  'acl',
  'contact',
  'phoneprov',
  'resource_list',
  'outbound-publish',
  'inbound-publication',
  'asterisk-publication',
]);

interface Context {
  readonly where: string;
  readonly id: string;
  readonly type: string;
  error(key: string, message: string, where?: string): void;
  warn(message: string, where?: string): void;
}

type Draft = Record<string, unknown>;

interface FieldSpec {
  /** Repeated keys add to the list instead of replacing it. */
  readonly list?: boolean;
  apply(draft: Draft, value: string, fail: (message: string) => void, warn: (message: string) => void): void;
}

interface TypeSpec {
  defaults(id: string): Draft;
  readonly fields: ReadonlyMap<string, FieldSpec>;
  /** Options accepted and ignored without a warning (they describe what Patchbay always does). */
  readonly silent?: ReadonlySet<string>;
  finish(draft: Draft, ctx: Context): PjsipObject | undefined;
}

function set<T>(key: string, parse: (value: string) => Parsed<T>): FieldSpec {
  return {
    apply(draft, value, fail) {
      const parsed = parse(value);
      if (parsed.ok) draft[key] = parsed.value;
      else fail(parsed.error);
    },
  };
}

const text = (key: string, options: { empty?: 'unset' } = {}): FieldSpec => ({
  apply(draft, value) {
    const trimmed = value.trim();
    if (trimmed === '' && options.empty === 'unset') delete draft[key];
    else draft[key] = trimmed;
  },
});

const names = (key: string): FieldSpec => set(key, (value) => ({ ok: true, value: splitList(value).slice(0, MAX_LIST_ITEMS) }));

const bool = (key: string) => set(key, parseBool);
const int = (key: string, min: number, max: number) => set(key, (value) => parseInteger(value, min, max));

function listOf<T>(key: string, parse: (item: string) => Parsed<T>): FieldSpec {
  return {
    list: true,
    apply(draft, value, fail) {
      const list = (draft[key] as T[] | undefined) ?? [];
      for (const item of splitList(value)) {
        if (list.length >= MAX_LIST_ITEMS) return fail(`more than ${MAX_LIST_ITEMS} items`);
        const parsed = parse(item);
        if (parsed.ok) list.push(parsed.value);
        else fail(parsed.error);
      }
      draft[key] = list;
    },
  };
}

/** allow/disallow as Asterisk applies them: in order, `all` meaning every codec, `!x` in allow = disallow. */
function codecOp(allow: boolean): FieldSpec {
  return {
    list: true,
    apply(draft, value, fail, warn) {
      let codecs = draft.codecs as SdpCodec[];
      draft.codecsMentioned = true;
      for (let item of splitList(value.toLowerCase())) {
        let adding = allow;
        if (item.startsWith('!')) {
          adding = !adding;
          item = item.slice(1).trim();
        }
        if (item === 'all') {
          codecs = adding ? [...codecs, ...SUPPORTED_CODECS.filter((codec) => !codecs.includes(codec))] : [];
        } else if (isSdpCodec(item)) {
          codecs = codecs.filter((codec) => codec !== item);
          if (adding) codecs.push(item);
        } else if (ASTERISK_CODECS.has(item)) {
          if (adding) warn(`codec ${item} is not supported by Patchbay (only ulaw and alaw); ignored`);
        } else {
          fail(`unknown codec ${shown(item)}`);
        }
      }
      draft.codecs = codecs;
    },
  };
}

function spec(fields: Record<string, FieldSpec>): ReadonlyMap<string, FieldSpec> {
  return new Map(Object.entries(fields));
}

const DTMF_MODES: readonly DtmfMode[] = ['rfc4733', 'inband', 'info', 'auto', 'auto_info'];
const IDENTIFY_BY: readonly IdentifyBy[] = ['username', 'auth_username', 'ip', 'header', 'request_uri'];
const IDENTIFIERS: readonly IdentifierMethod[] = ['ip', 'username', 'anonymous', 'header', 'auth_username', 'request_uri'];

const ENDPOINT: TypeSpec = {
  defaults: (id) => ({
    type: 'endpoint',
    id,
    context: 'default',
    codecs: [],
    auth: [],
    outboundAuth: [],
    aors: [],
    dtmfMode: 'rfc4733',
    directMedia: false,
    identifyBy: ['username', 'ip'],
    rtpSymmetric: false,
    forceRport: true,
    rewriteContact: false,
    rtpTimeout: 0,
    rtcpMux: false,
    allowUnauthenticatedOptions: false,
    sendPai: false,
    sendRpid: false,
    trustIdInbound: false,
    trustIdOutbound: false,
  }),
  fields: spec({
    context: text('context'),
    message_context: text('messageContext', { empty: 'unset' }),
    allow: codecOp(true),
    disallow: codecOp(false),
    auth: names('auth'),
    outbound_auth: names('outboundAuth'),
    aors: names('aors'),
    dtmf_mode: set('dtmfMode', (value) => parseChoice(value, DTMF_MODES)),
    direct_media: {
      apply(draft, value, fail, warn) {
        const parsed = parseBool(value);
        if (!parsed.ok) return fail(parsed.error);
        if (parsed.value) warn('direct_media=yes is not implemented by Patchbay: media always flows through the server');
        draft.directMedia = false;
      },
    },
    identify_by: {
      apply(draft, value, fail) {
        const list: IdentifyBy[] = [];
        for (const item of splitList(value)) {
          const parsed = parseChoice(item, IDENTIFY_BY);
          if (!parsed.ok) return fail(parsed.error);
          if (!list.includes(parsed.value)) list.push(parsed.value);
        }
        draft.identifyBy = list;
      },
    },
    callerid: {
      apply(draft, value, fail) {
        const parsed = parseCallerId(value);
        if (!parsed.ok) return fail(parsed.error);
        if (parsed.value.name === undefined && parsed.value.number === undefined) delete draft.callerId;
        else draft.callerId = parsed.value;
      },
    },
    from_user: text('fromUser', { empty: 'unset' }),
    from_domain: text('fromDomain', { empty: 'unset' }),
    send_pai: bool('sendPai'),
    send_rpid: bool('sendRpid'),
    trust_id_inbound: bool('trustIdInbound'),
    trust_id_outbound: bool('trustIdOutbound'),
    transport: text('transport', { empty: 'unset' }),
    language: text('language', { empty: 'unset' }),
    rtp_symmetric: bool('rtpSymmetric'),
    force_rport: bool('forceRport'),
    rewrite_contact: bool('rewriteContact'),
    media_address: {
      apply(draft, value, fail) {
        const trimmed = value.trim();
        if (trimmed === '') delete draft.mediaAddress;
        else if (isIP(trimmed) || isHostName(trimmed)) draft.mediaAddress = trimmed;
        else fail(`${shown(value)} is not an address or host name`);
      },
    },
    rtp_timeout: int('rtpTimeout', 0, 86_400),
    rtcp_mux: bool('rtcpMux'),
    outbound_proxy: {
      apply(draft, value, fail) {
        if (value.trim() === '') return void delete draft.outboundProxy;
        const parsed = parseSipUri(value);
        if (parsed.ok) draft.outboundProxy = parsed.value;
        else fail(parsed.error);
      },
    },
    allow_unauthenticated_options: bool('allowUnauthenticatedOptions'),
  }),
  finish(draft, ctx) {
    if (draft.codecsMentioned === undefined) ctx.warn('no allow= given: the endpoint has no codecs and cannot carry calls');
    else if ((draft.codecs as SdpCodec[]).length === 0) ctx.warn('allow= leaves no codec Patchbay supports (ulaw, alaw): calls cannot be set up');
    delete draft.codecsMentioned;
    if (draft.context === '') ctx.error('context', 'must not be empty');
    return draft as unknown as PjsipEndpoint;
  },
};

const sipUris = (key: string) => listOf(key, parseSipUri);

const AOR: TypeSpec = {
  defaults: (id) => ({
    type: 'aor',
    id,
    maxContacts: 0,
    removeExisting: false,
    contacts: [],
    qualifyFrequency: 0,
    qualifyTimeout: 3,
    defaultExpiration: 3600,
    minimumExpiration: 60,
    maximumExpiration: 7200,
  }),
  fields: spec({
    max_contacts: int('maxContacts', 0, 1000),
    remove_existing: bool('removeExisting'),
    contact: sipUris('contacts'),
    qualify_frequency: int('qualifyFrequency', 0, 86_400),
    qualify_timeout: set('qualifyTimeout', (value) => parseDecimal(value, 0, 3600)),
    default_expiration: int('defaultExpiration', 1, 2_147_483_647),
    minimum_expiration: int('minimumExpiration', 1, 2_147_483_647),
    maximum_expiration: int('maximumExpiration', 1, 2_147_483_647),
    outbound_proxy: set('outboundProxy', parseSipUri),
  }),
  finish(draft, ctx) {
    const { minimumExpiration: min, maximumExpiration: max, defaultExpiration: def } = draft as unknown as PjsipAor;
    if (min > max) ctx.error('minimum_expiration', `${min} is above maximum_expiration ${max}`);
    else if (def < min || def > max) ctx.error('default_expiration', `${def} is not between minimum_expiration ${min} and maximum_expiration ${max}`);
    return draft as unknown as PjsipAor;
  },
};

const AUTH: TypeSpec = {
  defaults: (id) => ({ type: 'auth', id, authType: 'userpass', username: '', nonceLifetime: 32 }),
  fields: spec({
    auth_type: set('authType', (value) => parseChoice(value, ['userpass', 'md5'] as const)),
    username: text('username'),
    password: { apply: (draft, value) => void (draft.password = value) },
    md5_cred: text('md5Cred', { empty: 'unset' }),
    realm: text('realm', { empty: 'unset' }),
    nonce_lifetime: int('nonceLifetime', 1, 86_400),
  }),
  finish(draft, ctx) {
    if (draft.username === '') ctx.error('username', 'is required');
    if (draft.authType === 'md5') {
      const cred = draft.md5Cred;
      if (typeof cred !== 'string' || !/^[0-9a-fA-F]{32}$/.test(cred)) {
        ctx.error('md5_cred', 'auth_type=md5 needs md5_cred, 32 hexadecimal digits (MD5 of username:realm:password)');
      } else {
        draft.md5Cred = cred.toLowerCase();
      }
      if (draft.password !== undefined && draft.password !== '') ctx.warn('password is ignored with auth_type=md5');
      delete draft.password;
    } else {
      if (draft.md5Cred !== undefined) ctx.warn('md5_cred is ignored with auth_type=userpass');
      delete draft.md5Cred;
      draft.password ??= '';
    }
    return draft as unknown as PjsipAuth;
  },
};

const IDENTIFY: TypeSpec = {
  defaults: (id) => ({ type: 'identify', id, endpoint: '', match: [], srvLookups: true }),
  fields: spec({
    endpoint: text('endpoint'),
    match: listOf<IdentifyMatch>('match', parseIdentifyMatch),
    srv_lookups: bool('srvLookups'),
  }),
  finish(draft, ctx) {
    if (draft.endpoint === '') ctx.error('endpoint', 'is required');
    if ((draft.match as unknown[]).length === 0) ctx.warn('no match= given: the identify matches nothing');
    return draft as unknown as PjsipIdentify;
  },
};

const TRANSPORT: TypeSpec = {
  defaults: (id) => ({ type: 'transport', id, protocol: 'udp', bind: { host: '0.0.0.0', port: 5060 }, localNet: [] }),
  fields: spec({
    protocol: {
      apply(draft, value, fail) {
        const parsed = parseChoice(value, ['udp', 'tcp', 'tls', 'ws', 'wss', 'flow'] as const);
        if (!parsed.ok) return fail(parsed.error);
        draft.protocol = parsed.value;
      },
    },
    bind: {
      apply(draft, value, fail) {
        const parsed = parseHostPort(value);
        if (!parsed.ok) return fail(parsed.error);
        if (!isIP(parsed.value.host)) return fail(`${shown(value)}: bind needs an IP address`);
        draft.bind = { host: parsed.value.host, port: parsed.value.port ?? 5060 };
      },
    },
    external_media_address: hostField('externalMediaAddress'),
    external_signaling_address: hostField('externalSignalingAddress'),
    external_signaling_port: int('externalSignalingPort', 1, 65535),
    local_net: listOf<IpNetwork>('localNet', parseNetwork),
  }),
  finish(draft, ctx) {
    if (draft.protocol !== 'udp' && draft.protocol !== 'tcp') {
      ctx.warn(`protocol=${String(draft.protocol)} is not implemented by Patchbay (udp and tcp are); transport ignored`);
      return undefined;
    }
    return draft as unknown as PjsipTransport;
  },
};

function hostField(key: string): FieldSpec {
  return {
    apply(draft, value, fail) {
      const trimmed = value.trim();
      if (trimmed === '') return void delete draft[key];
      if (isIP(trimmed) || isHostName(trimmed)) draft[key] = trimmed;
      else fail(`${shown(value)} is not an address or host name`);
    },
  };
}

const REGISTRATION: TypeSpec = {
  defaults: (id) => ({
    type: 'registration',
    id,
    serverUri: '',
    clientUri: '',
    outboundAuth: [],
    expiration: 3600,
    retryInterval: 60,
    forbiddenRetryInterval: 0,
    fatalRetryInterval: 0,
    maxRetries: 10,
    authRejectionPermanent: true,
    line: false,
    maxRandomInitialDelay: 10,
  }),
  fields: spec({
    server_uri: set('serverUri', parseSipUri),
    client_uri: set('clientUri', parseSipUri),
    contact_user: text('contactUser', { empty: 'unset' }),
    outbound_auth: names('outboundAuth'),
    transport: text('transport', { empty: 'unset' }),
    outbound_proxy: set('outboundProxy', parseSipUri),
    expiration: int('expiration', 1, 2_147_483_647),
    retry_interval: int('retryInterval', 1, 2_147_483_647),
    forbidden_retry_interval: int('forbiddenRetryInterval', 0, 2_147_483_647),
    fatal_retry_interval: int('fatalRetryInterval', 0, 2_147_483_647),
    max_retries: int('maxRetries', 0, 2_147_483_647),
    auth_rejection_permanent: bool('authRejectionPermanent'),
    line: bool('line'),
    endpoint: text('endpoint', { empty: 'unset' }),
    max_random_initial_delay: int('maxRandomInitialDelay', 0, 3600),
  }),
  finish(draft, ctx) {
    if (draft.serverUri === '') ctx.error('server_uri', 'is required');
    if (draft.clientUri === '') ctx.error('client_uri', 'is required');
    if (draft.line === true && draft.endpoint === undefined) ctx.error('endpoint', 'is required with line=yes');
    return draft as unknown as PjsipRegistration;
  },
};

const DOMAIN_ALIAS: TypeSpec = {
  defaults: (id) => ({ type: 'domain_alias', id, domain: '' }),
  fields: spec({ domain: text('domain') }),
  finish(draft, ctx) {
    if (draft.domain === '') ctx.error('domain', 'is required');
    return draft as unknown as PjsipDomainAlias;
  },
};

const GLOBAL: TypeSpec = {
  defaults: (id) => ({
    type: 'global',
    id,
    endpointIdentifierOrder: ['ip', 'username', 'anonymous'],
    defaultRealm: 'asterisk',
    userAgent: 'Patchbay',
    defaultFromUser: 'asterisk',
    maxForwards: 70,
    keepAliveInterval: 90,
  }),
  fields: spec({
    endpoint_identifier_order: {
      apply(draft, value, fail) {
        const list: IdentifierMethod[] = [];
        for (const item of splitList(value)) {
          const parsed = parseChoice(item, IDENTIFIERS);
          if (!parsed.ok) return fail(parsed.error);
          if (!list.includes(parsed.value)) list.push(parsed.value);
        }
        draft.endpointIdentifierOrder = list;
      },
    },
    default_realm: text('defaultRealm'),
    user_agent: text('userAgent'),
    default_from_user: text('defaultFromUser'),
    max_forwards: int('maxForwards', 1, 255),
    keep_alive_interval: int('keepAliveInterval', 0, 86_400),
  }),
  finish: (draft) => draft as unknown as PjsipGlobal,
};

const TYPES: ReadonlyMap<string, TypeSpec> = new Map([
  ['endpoint', ENDPOINT],
  ['aor', AOR],
  ['auth', AUTH],
  ['identify', IDENTIFY],
  ['transport', TRANSPORT],
  ['registration', REGISTRATION],
  ['domain_alias', DOMAIN_ALIAS],
  ['global', GLOBAL],
]);

/** The object types this module turns into typed objects. */
export const PJSIP_OBJECT_TYPES: readonly string[] = [...TYPES.keys()];

/** The attribute names read for a type (`context`, `allow` …); empty for a type not built here. */
export function pjsipAttributeNames(type: string): string[] {
  return [...(TYPES.get(type)?.fields.keys() ?? [])];
}

/** The defaults of `global` when there is no such section. */
export function defaultPjsipGlobal(): PjsipGlobal {
  return GLOBAL.defaults('global') as unknown as PjsipGlobal;
}

function fieldsOf(raw: RawPjsipObject): RawField[] {
  const fields = raw.fields;
  if (Array.isArray(fields)) return fields as RawField[];
  if (typeof fields !== 'object' || fields === null) return [];
  const record = fields as Readonly<Record<string, unknown>>;
  const names = Object.keys(record);
  // A record cannot keep an order between allow and disallow: disallow first, as people write them.
  names.sort((a, b) => Number(b === 'disallow') - Number(a === 'disallow'));
  const out: RawField[] = [];
  for (const name of names) {
    const value = record[name];
    if (typeof value === 'string') out.push({ name, value });
    else if (typeof value === 'number' && Number.isFinite(value)) out.push({ name, value: String(value) });
    else if (typeof value === 'boolean') out.push({ name, value: value ? 'yes' : 'no' });
    else out.push({ name, value: '\u0000' }); // reported as a bad value below
  }
  return out;
}

function label(raw: RawPjsipObject): string {
  return typeof raw.where === 'string' && raw.where !== '' ? raw.where : `res_pjsip/${String(raw.type)}/${String(raw.id)}`;
}

/**
 * Validates one object and returns its typed form (undefined when it has errors, or is of a type
 * Patchbay ignores). Used alone for a dynamic configuration PUT, or by buildPjsipConfig for a set.
 */
export function buildPjsipObject(raw: RawPjsipObject): BuildResult<PjsipObject> {
  const errors: string[] = [];
  const warnings: string[] = [];
  try {
    const value = buildInto(raw, errors, warnings);
    return { errors, warnings, ...(value && errors.length === 0 ? { value } : {}) };
  } catch (error) {
    // Not expected; a config that trips a bug must still not take the server down.
    errors.push(`${label(raw)}: internal error reading the object: ${error instanceof Error ? error.message : String(error)}`);
    return { errors, warnings };
  }
}

function buildInto(raw: RawPjsipObject, errors: string[], warnings: string[]): PjsipObject | undefined {
  const where = label(raw);
  const id = typeof raw.id === 'string' ? raw.id : '';
  const type = typeof raw.type === 'string' ? raw.type.trim().toLowerCase() : '';
  // eslint-disable-next-line no-control-regex
  if (id === '' || id.length > MAX_ID_LENGTH || /[\x00-\x1f\x7f]/.test(id)) {
    errors.push(`${where}: object name ${shown(id)} must be 1 to ${MAX_ID_LENGTH} printable characters`);
    return undefined;
  }
  const spec = TYPES.get(type);
  if (!spec) {
    if (IGNORED_TYPES.has(type)) warnings.push(`${where}: [${id}] type=${type} is not implemented by Patchbay; section ignored`);
    else warnings.push(`${where}: [${id}] unknown type ${shown(type)}; section kept but not used`);
    return undefined;
  }
  const ctx: Context = {
    where,
    id,
    type,
    error: (key, message, at = where) => void errors.push(`${at}: [${id}] ${key}: ${message}`),
    warn: (message, at = where) => void warnings.push(`${at}: [${id}] ${message}`),
  };
  const fields = fieldsOf(raw);
  if (fields.length > MAX_FIELDS) {
    ctx.error('(fields)', `more than ${MAX_FIELDS} options`);
    return undefined;
  }
  const draft = spec.defaults(id);
  const warnedUnknown = new Set<string>();
  for (const field of fields) {
    const name = typeof field.name === 'string' ? field.name.trim().toLowerCase() : '';
    const at = field.where ?? where;
    if (name === 'type') continue;
    const value = typeof field.value === 'string' ? field.value : '';
    const handler = spec.fields.get(name);
    if (!handler) {
      if (!warnedUnknown.has(name)) {
        warnedUnknown.add(name);
        ctx.warn(`${type} option ${shown(name)} is not implemented by Patchbay; ignored`, at);
      }
      continue;
    }
    // eslint-disable-next-line no-control-regex
    if (value.length > MAX_VALUE_LENGTH || /[\x00\r\n]/.test(value)) {
      ctx.error(name, value.length > MAX_VALUE_LENGTH ? `longer than ${MAX_VALUE_LENGTH} characters` : 'is not a text value', at);
      continue;
    }
    handler.apply(
      draft,
      value,
      (message) => ctx.error(name, message, at),
      (message) => ctx.warn(message, at),
    );
  }
  const before = errors.length;
  const built = spec.finish(draft, ctx);
  return errors.length > before ? undefined : built;
}

function capped(lines: string[]): string[] {
  if (lines.length <= MAX_MESSAGES) return lines;
  return [...lines.slice(0, MAX_MESSAGES), `… and ${lines.length - MAX_MESSAGES} more`];
}

/**
 * Builds the whole res_pjsip configuration from raw objects of any source. Objects with errors are
 * left out; dangling references (an endpoint's aors/auth, an identify's endpoint …) are warnings,
 * since dynamic configuration may add the missing object later.
 */
export function buildPjsipConfig(objects: readonly RawPjsipObject[]): BuildResult<PjsipConfig> & { readonly value: PjsipConfig } {
  const errors: string[] = [];
  const warnings: string[] = [];
  const maps = {
    endpoint: new Map<string, PjsipEndpoint>(),
    aor: new Map<string, PjsipAor>(),
    auth: new Map<string, PjsipAuth>(),
    identify: new Map<string, PjsipIdentify>(),
    transport: new Map<string, PjsipTransport>(),
    registration: new Map<string, PjsipRegistration>(),
    domain_alias: new Map<string, PjsipDomainAlias>(),
  };
  let global: PjsipGlobal | undefined;
  const unknown: RawPjsipObject[] = [];
  if (objects.length > MAX_OBJECTS) errors.push(`more than ${MAX_OBJECTS} res_pjsip objects; the rest are ignored`);

  for (const raw of objects.slice(0, MAX_OBJECTS)) {
    const result = buildPjsipObject(raw);
    errors.push(...result.errors);
    warnings.push(...result.warnings);
    const object = result.value;
    if (!object) {
      const type = typeof raw.type === 'string' ? raw.type.trim().toLowerCase() : '';
      if (result.errors.length === 0 && !TYPES.has(type) && !IGNORED_TYPES.has(type)) unknown.push(raw);
      continue;
    }
    if (object.type === 'global') {
      if (global) errors.push(`${label(raw)}: [${object.id}] a second global section (the first was [${global.id}])`);
      else global = object;
      continue;
    }
    const map = maps[object.type] as Map<string, PjsipObject>;
    if (map.has(object.id)) {
      errors.push(`${label(raw)}: [${object.id}] a second ${object.type} with this name`);
      continue;
    }
    map.set(object.id, object);
  }

  const dangling = (owner: { type: string; id: string }, key: string, target: keyof typeof maps, names: readonly string[]) => {
    for (const name of names) {
      if (!maps[target].has(name)) warnings.push(`[${owner.id}] ${owner.type} ${key}: no ${target} named ${shown(name)}`);
    }
  };
  for (const endpoint of maps.endpoint.values()) {
    dangling(endpoint, 'aors', 'aor', endpoint.aors);
    dangling(endpoint, 'auth', 'auth', endpoint.auth);
    dangling(endpoint, 'outbound_auth', 'auth', endpoint.outboundAuth);
    if (endpoint.transport) dangling(endpoint, 'transport', 'transport', [endpoint.transport]);
  }
  for (const identify of maps.identify.values()) dangling(identify, 'endpoint', 'endpoint', [identify.endpoint]);
  for (const registration of maps.registration.values()) {
    dangling(registration, 'outbound_auth', 'auth', registration.outboundAuth);
    if (registration.endpoint) dangling(registration, 'endpoint', 'endpoint', [registration.endpoint]);
    if (registration.transport) dangling(registration, 'transport', 'transport', [registration.transport]);
  }

  return {
    errors: capped(errors),
    warnings: capped(warnings),
    value: {
      endpoints: maps.endpoint,
      aors: maps.aor,
      auths: maps.auth,
      identifies: maps.identify,
      transports: maps.transport,
      registrations: maps.registration,
      domainAliases: maps.domain_alias,
      global: global ?? defaultPjsipGlobal(),
      unknown,
    },
  };
}
