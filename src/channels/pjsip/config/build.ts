// Turns raw `{type, id, fields}` objects — from pjsip.conf, the YAML `config_objects` or a dynamic
// configuration PUT — into typed res_pjsip objects, with one validation for all three. Bad values are
// errors (one line each, naming where, the object and the key); options Patchbay does not implement
// are warnings (one line each) and are otherwise ignored. Never throws.
import { defaultPjsipGlobal, IGNORED_TYPES, PJSIP_TYPES } from './declarations.ts';
import { defaultPjsipSystem } from './acl-system-options.ts';
import type { OptionInfo } from './options.ts';
import type {
  PjsipAcl,
  PjsipAor,
  PjsipAuth,
  PjsipConfig,
  PjsipDomainAlias,
  PjsipEndpoint,
  PjsipGlobal,
  PjsipIdentify,
  PjsipObject,
  PjsipRegistration,
  PjsipSystem,
  PjsipTransport,
  RawField,
  RawPjsipObject,
} from './types.ts';
import { shown } from './values.ts';

export interface BuildResult<T> {
  readonly errors: string[];
  readonly warnings: string[];
  readonly value?: T;
}

const MAX_ID_LENGTH = 256;
const MAX_FIELDS = 512;
const MAX_OBJECTS = 100_000;
/** Lines kept per list; beyond, one line says how many more there were. */
const MAX_MESSAGES = 1000;

/** The object types this module turns into typed objects. */
export const PJSIP_OBJECT_TYPES: readonly string[] = [...PJSIP_TYPES.keys()];

/** The attribute names read for a type (`context`, `allow` …); empty for a type not built here. */
export function pjsipAttributeNames(type: string): string[] {
  return [...(PJSIP_TYPES.get(type)?.options.keys() ?? [])];
}

/** What the declaration says of one option of a type, undefined when Patchbay does not read it. */
export function pjsipOption(type: string, name: string): OptionInfo | undefined {
  return PJSIP_TYPES.get(type)?.options.get(name);
}

export { defaultPjsipGlobal };

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
  const declared = PJSIP_TYPES.get(type);
  if (!declared) {
    if (IGNORED_TYPES.has(type)) warnings.push(`${where}: [${id}] type=${type} is not implemented by Patchbay; section ignored`);
    else warnings.push(`${where}: [${id}] unknown type ${shown(type)}; section kept but not used`);
    return undefined;
  }
  const fields = fieldsOf(raw);
  if (fields.length > MAX_FIELDS) {
    errors.push(`${where}: [${id}] (fields): more than ${MAX_FIELDS} options`);
    return undefined;
  }
  const before = errors.length;
  const built = declared.build(
    id,
    fields.map((field) => ({ name: typeof field.name === 'string' ? field.name : '', value: typeof field.value === 'string' ? field.value : '', where: field.where })),
    {
      error: (key, message, at = where) => void errors.push(`${at ?? where}: [${id}] ${key}: ${message}`),
      warn: (message, at = where) => void warnings.push(`${at ?? where}: [${id}] ${message}`),
    },
  );
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
    acl: new Map<string, PjsipAcl>(),
  };
  let global: PjsipGlobal | undefined;
  let system: PjsipSystem | undefined;
  const unknown: RawPjsipObject[] = [];
  if (objects.length > MAX_OBJECTS) errors.push(`more than ${MAX_OBJECTS} res_pjsip objects; the rest are ignored`);

  for (const raw of objects.slice(0, MAX_OBJECTS)) {
    const result = buildPjsipObject(raw);
    errors.push(...result.errors);
    warnings.push(...result.warnings);
    const object = result.value;
    if (!object) {
      const type = typeof raw.type === 'string' ? raw.type.trim().toLowerCase() : '';
      if (result.errors.length === 0 && !PJSIP_TYPES.has(type) && !IGNORED_TYPES.has(type)) unknown.push(raw);
      continue;
    }
    if (object.type === 'global') {
      if (global) errors.push(`${label(raw)}: [${object.id}] a second global section (the first was [${global.id}])`);
      else global = object;
      continue;
    }
    if (object.type === 'system') {
      if (system) errors.push(`${label(raw)}: [${object.id}] a second system section (the first was [${system.id}])`);
      else system = object;
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
      acls: maps.acl,
      system: system ?? defaultPjsipSystem(),
      unknown,
    },
  };
}
