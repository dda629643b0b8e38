// The res_pjsip object functions an Asterisk dialplan reads (func_pjsip_endpoint, func_pjsip_aor,
// func_pjsip_contact, chan_pjsip's PJSIP_DIAL_CONTACTS): an endpoint's or AOR's configured field
// (the value set, else Asterisk's default, as sorcery's object set gives it), a contact's fields
// and qualify status, and the dial string of every reachable contact of an endpoint's AORs. They
// read the technology's live objects (runtime.ts); in the docs' catalog there are none, and every
// read fails as for an unknown object. Arguments are dialplan text, hostile: names are bounded,
// and so is the number of AORs one call walks.
import { createHash } from 'node:crypto';
import type { TechnologyFunction } from '../../core/channels/technology.ts';
import { InvalidError } from '../../core/errors.ts';
import { splitArgs } from '../../dialplan/args.ts';
import type { Binding } from '../../sip/registrar.ts';
import { PJSIP_TYPES } from './config/declarations.ts';
import type { PjsipConfig } from './config/index.ts';
import type { QualifyState } from './qualify.ts';
import type { PjsipRuntime } from './runtime.ts';

/** What the functions read of the running technology (runtime.ts gives it). */
export interface PjsipObjectSource {
  readonly config: PjsipConfig;
  readonly registrar: { lookup(aor: string): readonly Binding[] };
  readonly qualifier: { state(aor: string, uri: string): QualifyState | undefined } | undefined;
  /** The fields set on a configured object (no defaults); undefined when the store has none. */
  fieldsOf(type: string, id: string): Readonly<Record<string, string>> | undefined;
  /** Asterisk logs a warning where these functions fail; so does Patchbay. */
  warn(message: string): void;
}

/** The running technology as the functions read it; undefined before it starts. */
export function objectSourceOf(runtime: PjsipRuntime): () => PjsipObjectSource | undefined {
  const source: PjsipObjectSource = {
    get config() {
      return runtime.config;
    },
    get registrar() {
      return runtime.registrar;
    },
    get qualifier() {
      return runtime.qualifier;
    },
    fieldsOf: (type, id) => runtime.context?.configObjects.list('res_pjsip', type).find((object) => object.id === id)?.fields,
    warn: (message) => runtime.log?.warn(message),
  };
  return () => (runtime.context ? source : undefined);
}

const DOCS_SECTION = 'PJSIP objects';
/** Longest object name or field name taken from the dialplan (Asterisk's sorcery ids are shorter). */
const MAX_NAME = 256;
/** Most AORs one PJSIP_DIAL_CONTACTS walks (an endpoint's `aors` list is bounded alike). */
const MAX_AORS = 64;

/** Asterisk's contact ids: `aor;@md5(uri)` for a registered contact, `aor@@md5(uri)` for a configured one. */
export function contactId(aor: string, uri: string, permanent: boolean): string {
  return `${aor}${permanent ? '@@' : ';@'}${createHash('md5').update(uri).digest('hex')}`;
}

/** One contact of an AOR as the functions see it. */
interface ContactView {
  readonly id: string;
  readonly aor: string;
  readonly uri: string;
  readonly binding: Binding | undefined;
}

/** The AOR's contacts as Asterisk retrieves them: the registered ones, then the configured ones. */
function contactsOf(source: PjsipObjectSource, aor: string): ContactView[] {
  const views: ContactView[] = [];
  for (const binding of source.registrar.lookup(aor)) views.push({ id: contactId(aor, binding.uri, false), aor, uri: binding.uri, binding });
  for (const written of source.config.aors.get(aor)?.contacts ?? []) {
    const uri = written.replace(/^<|>$/g, '');
    views.push({ id: contactId(aor, uri, true), aor, uri, binding: undefined });
  }
  return views;
}

/** Two arguments, both required, each bounded: `name,field`. */
function nameAndField(fn: string, kind: string, args: string): { name: string; field: string } {
  if (args.trim() === '') throw new InvalidError(`Cannot call ${fn} without arguments`);
  const [name = '', field = ''] = splitArgs(args, ',', 2).map((part) => part.trim());
  if (name === '') throw new InvalidError(`Cannot call ${fn} without ${kind} name to query`);
  if (field === '') throw new InvalidError(`Cannot call ${fn} with an empty field name to query`);
  if (name.length > MAX_NAME || field.length > MAX_NAME) throw new InvalidError(`${fn}: a name longer than ${MAX_NAME} characters`);
  return { name, field };
}

function sourceOr(source: PjsipObjectSource | undefined, fn: string): PjsipObjectSource {
  if (!source) throw new InvalidError(`${fn}: PJSIP is not running`);
  return source;
}

/** Fails the read as Asterisk does: its warning in the log, the reason for ARI. */
function fail(source: PjsipObjectSource, message: string): never {
  source.warn(message);
  throw new InvalidError(message);
}

/** A configured field of an endpoint or AOR: the value set, else the declared default; undefined for an unknown field. */
function configuredField(source: PjsipObjectSource, type: 'endpoint' | 'aor', id: string, field: string): string | undefined {
  const option = PJSIP_TYPES.get(type)?.options.get(field);
  if (!option) return undefined;
  const set = source.fieldsOf(type, id);
  // A YAML value may be a number or a boolean: the dialplan reads text.
  return set && Object.hasOwn(set, field) ? String(set[field]) : option.default;
}

/** Asterisk's labels of a contact's status (ast_sip_get_contact_status_label): an unqualified contact is Unknown. */
function statusLabel(state: QualifyState | undefined): string {
  if (state?.status === 'Reachable') return 'Available';
  if (state?.status === 'Unreachable') return 'Unavailable';
  return 'Unknown';
}

/** The sorcery fields of a contact that Patchbay knows; the rest of Asterisk's read as their defaults. */
function contactField(source: PjsipObjectSource, contact: ContactView, field: string): string | undefined {
  const aor = source.config.aors.get(contact.aor);
  const binding = contact.binding;
  switch (field) {
    case 'status':
      return statusLabel(source.qualifier?.state(contact.aor, contact.uri));
    case 'rtt': {
      const state = source.qualifier?.state(contact.aor, contact.uri);
      return state?.status === 'Reachable' ? String(state.roundtripUsec) : 'N/A';
    }
    case 'uri':
      return contact.uri;
    case 'aor':
      return contact.aor;
    case 'path':
      return binding?.path.join(',') ?? '';
    case 'expiration_time':
      // Seconds since the epoch, as Asterisk writes it (the registrar's clock is the wall clock).
      return binding ? String(Math.floor(binding.expiresAt / 1000)) : '0';
    case 'qualify_frequency':
      return String(aor?.qualifyFrequency ?? 0);
    case 'qualify_timeout':
      return String(aor?.qualifyTimeout ?? 3);
    // A contact carries its AOR's qualify settings, as location.c copies them.
    case 'qualify_2xx_only':
      return aor?.qualify2xxOnly ? 'yes' : 'no';
    case 'authenticate_qualify':
      return aor?.authenticateQualify ? 'yes' : 'no';
    case 'prune_on_boot':
      return 'no';
    case 'outbound_proxy':
      return aor?.outboundProxy ?? '';
    case 'user_agent':
      return binding?.userAgent ?? '';
    case 'endpoint':
      return binding ? ([...source.config.endpoints.values()].find((endpoint) => endpoint.aors.includes(contact.aor))?.id ?? '') : '';
    case 'reg_server':
      return '';
    case 'via_addr':
      return binding?.source.address ?? '';
    case 'via_port':
      return String(binding?.source.port ?? 0);
    case 'call_id':
      return binding?.callId ?? '';
    default:
      return undefined;
  }
}

/** The contact named by its Asterisk id, among the AOR's that the id names. */
function findContact(source: PjsipObjectSource, id: string): ContactView | undefined {
  const separator = id.includes(';@') ? id.indexOf(';@') : id.indexOf('@@');
  if (separator <= 0) return undefined;
  return contactsOf(source, id.slice(0, separator)).find((contact) => contact.id === id);
}

/** PJSIP_DIAL_CONTACTS: `PJSIP/[user@]endpoint/uri` of each reachable contact, joined by `&`. */
export function dialContacts(source: PjsipObjectSource, args: string): string {
  const [endpointName = '', aorNames = '', requestUser = ''] = splitArgs(args, ',', 3).map((part) => part.trim());
  if (endpointName === '') fail(source, 'An endpoint name must be specified when using the \'PJSIP_DIAL_CONTACTS\' dialplan function');
  const endpoint = endpointName.length <= MAX_NAME ? source.config.endpoints.get(endpointName) : undefined;
  if (!endpoint) fail(source, `Specified endpoint '${endpointName.slice(0, MAX_NAME)}' was not found`);
  // The AOR given (a quoted "a,b" names several, as Asterisk splits it again), else the endpoint's own.
  const aors = aorNames !== '' ? aorNames.split(',').map((aor) => aor.trim()).filter((aor) => aor !== '') : endpoint.aors;
  if (aors.length === 0) fail(source, `No AOR has been provided and no AORs are configured on endpoint '${endpoint.id}'`);
  const user = requestUser === '' ? '' : `${requestUser.slice(0, MAX_NAME)}@`;
  const dial: string[] = [];
  for (const aor of aors.slice(0, MAX_AORS)) {
    // An unknown AOR is skipped: others may follow.
    if (!source.config.aors.has(aor)) continue;
    for (const contact of contactsOf(source, aor)) {
      // AST_SIP_CONTACT_FILTER_REACHABLE: a contact qualify found unavailable is left out; Unknown stays.
      if (source.qualifier?.state(aor, contact.uri)?.status === 'Unreachable') continue;
      dial.push(`PJSIP/${user}${endpoint.id}/${contact.uri}`);
    }
  }
  return dial.join('&');
}

/** The functions, reading `source()` at each call (undefined in the docs' catalog and before start). */
export function pjsipObjectFunctions(source: () => PjsipObjectSource | undefined): TechnologyFunction[] {
  return [
    {
      name: 'PJSIP_DIAL_CONTACTS',
      syntax: 'PJSIP_DIAL_CONTACTS(endpoint[,aor[,request_user]])',
      summary: 'The dial string of every reachable contact (registered, then configured) of the endpoint\'s AORs (or the one AOR given), `PJSIP/[request_user@]endpoint/uri` joined by `&`: `Dial(${PJSIP_DIAL_CONTACTS(alice)})` rings them all.',
      docsSection: DOCS_SECTION,
      read: (call) => dialContacts(sourceOr(source(), 'PJSIP_DIAL_CONTACTS'), call.args),
    },
    {
      name: 'PJSIP_ENDPOINT',
      syntax: 'PJSIP_ENDPOINT(name,field)',
      summary: 'A field of a configured endpoint (any res_pjsip endpoint option: the value set, else Asterisk\'s default); an unknown endpoint or field fails the read with Asterisk\'s warning.',
      docsSection: DOCS_SECTION,
      read(call) {
        const { name, field } = nameAndField('PJSIP_ENDPOINT', 'an endpoint', call.args);
        const objects = sourceOr(source(), 'PJSIP_ENDPOINT');
        if (!objects.config.endpoints.has(name)) fail(objects, `Failed to retrieve information for endpoint '${name}'`);
        return configuredField(objects, 'endpoint', name, field) ?? fail(objects, `Unknown property '${field}' for PJSIP endpoint`);
      },
    },
    {
      name: 'PJSIP_AOR',
      syntax: 'PJSIP_AOR(name,field)',
      summary: 'A field of a configured AOR (the value set, else Asterisk\'s default); `contact` gives the ids of its contacts (registered `aor;@hash`, configured `aor@@hash`), comma-separated, for PJSIP_CONTACT.',
      docsSection: DOCS_SECTION,
      read(call) {
        const { name, field } = nameAndField('PJSIP_AOR', 'an AOR', call.args);
        const objects = sourceOr(source(), 'PJSIP_AOR');
        if (!objects.config.aors.has(name)) fail(objects, `Failed to retrieve information for AOR '${name}'`);
        if (field === 'contact') return contactsOf(objects, name).map((contact) => contact.id).join(',');
        return configuredField(objects, 'aor', name, field) ?? fail(objects, `Unknown property '${field}' for PJSIP AOR`);
      },
    },
    {
      name: 'PJSIP_CONTACT',
      syntax: 'PJSIP_CONTACT(contact_id,field)',
      summary: 'A field of a contact named by its id (from PJSIP_AOR(aor,contact)): uri, status (Available, Unavailable, Unknown), rtt (µs, N/A unless available), user_agent, expiration_time, via_addr, via_port, call_id, path, endpoint, qualify_frequency, qualify_timeout…',
      docsSection: DOCS_SECTION,
      read(call) {
        const { name, field } = nameAndField('PJSIP_CONTACT', 'a contact', call.args);
        const objects = sourceOr(source(), 'PJSIP_CONTACT');
        const contact = findContact(objects, name) ?? fail(objects, `Failed to retrieve information for contact '${name}'`);
        return contactField(objects, contact, field) ?? fail(objects, `Unknown property '${field}' for PJSIP contact`);
      },
    },
  ];
}
