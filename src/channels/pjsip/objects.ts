// The res_pjsip objects of the SIP technology, live: built from the core's dynamic configuration
// (the YAML `config_objects`, an Asterisk pjsip.conf read at start, and objects PUT through ARI —
// one set), rebuilt whenever an object changes; and the registration events Asterisk raises:
// ContactStatusChange for each contact that comes or goes, PeerStatusChange when an endpoint
// becomes reachable (its first contact) or unreachable (its last one gone).
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { TechnologyContext } from '../../core/channels/technology.ts';
import type { ConfigObjectTree } from '../../core/dynamic-config/file-backend.ts';
import { buildPjsipConfig, buildPjsipObject, PJSIP_OBJECT_TYPES, pjsipOption, readPjsipConf, type PjsipConfig, type PjsipConfRead, type PjsipEndpoint } from './config/index.ts';
import { includeReader } from '../../dialplan/includes.ts';
import type { RawField, RawPjsipObject } from './config/types.ts';
import type { BindingChange, Registrar } from '../../sip/registrar.ts';
import type { QualifyState, QualifyTarget } from './qualify.ts';
import { outboundCredentials } from './outbound-credentials.ts';
import { RegContext } from './regcontext.ts';

/** The qualify status of a contact, undefined when its AOR is not qualified. */
export type QualifyLookup = (aor: string, uri: string) => QualifyState | undefined;

const CONFIG_CLASS = 'res_pjsip';
/** Log lines remembered so that a rebuild does not repeat them; beyond this, forgotten. */
const MAX_REMEMBERED_LINES = 10_000;

/**
 * A pjsip.conf as dynamic configuration objects (`res_pjsip` → type → id → fields), to sit
 * read-only beside the YAML ones. A list option written more than once (`allow=ulaw` then
 * `allow=alaw`, `match=` lines) becomes one comma-separated value, as Asterisk adds such values
 * up; any other key keeps its last value, so a section overrides what its template set
 * (`context=vip` over a template's `context=phones` is `vip`, as in Asterisk).
 */
export function readPjsipConfObjects(file: string): { tree: ConfigObjectTree; errors: string[]; warnings: string[]; fatal: string[]; invalid: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { tree: {}, errors: [`${file}: cannot read: ${error instanceof Error ? error.message : String(error)}`], warnings: [], fatal: [], invalid: [] };
  }
  let read: PjsipConfRead;
  try {
    // #include/#tryinclude as in extensions.conf: confined to pjsip.conf's directory, bounded.
    read = readPjsipConf(text, file, includeReader(file));
  } catch (error) {
    return { tree: {}, errors: [`${file}: cannot read: ${error instanceof Error ? error.message : String(error)}`], warnings: [], fatal: [], invalid: [] };
  }
  // An identify left out would send its trunk's calls to another endpoint (or anonymous) without
  // a word: an invalid one is fatal at start-up, as docs/sip.md says (other objects are left out
  // with an error line, and at reload the running ones stay).
  // Every object's errors (`invalid`): a reload with any of them keeps the running objects.
  const invalid: string[] = [];
  const fatal: string[] = [];
  for (const object of read.objects) {
    const { errors } = buildPjsipObject(object);
    invalid.push(...errors);
    // An ACL left out would open the door it was written to close: as fatal as an identify.
    if (object.type === 'identify' || object.type === 'acl') fatal.push(...errors);
  }
  const types: Record<string, Record<string, Record<string, string>>> = Object.create(null) as Record<string, Record<string, Record<string, string>>>;
  for (const object of read.objects) {
    const byId = (types[object.type] ??= Object.create(null) as Record<string, Record<string, string>>);
    if (Object.hasOwn(byId, object.id)) {
      read.errors.push(`${object.where ?? file}: [${object.id}] a second ${object.type} with this name; the first is kept`);
      continue;
    }
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const field of object.fields as readonly RawField[]) {
      // A record cannot say that a disallow came after an allow (a child's disallow=ulaw after its
      // template's allow=ulaw): written into allow as `!ulaw`, the order of the two is kept.
      if (field.name === 'disallow' && object.type === 'endpoint' && Object.hasOwn(fields, 'allow')) {
        const negated = field.value.split(',').map((item) => item.trim()).filter((item) => item !== '').map((item) => (item.startsWith('!') ? item.slice(1) : `!${item}`));
        if (negated.length > 0) fields.allow = [fields.allow, ...negated].filter((item) => item !== '').join(',');
        continue;
      }
      // An ACL's (or an endpoint's) permit and deny lines are one chain in the order written (the last match wins): a
      // record keeps them as one `permit` list, each deny entry written as its inverse (`!`).
      if ((object.type === 'acl' || object.type === 'endpoint') && (field.name === 'deny' || field.name === 'contact_deny')) {
        const name = field.name === 'deny' ? 'permit' : 'contact_permit';
        const inverted = field.value.split(',').map((item) => item.trim()).filter((item) => item !== '').map((item) => (item.startsWith('!') ? item.slice(1) : `!${item}`)).join(',');
        if (inverted !== '') fields[name] = Object.hasOwn(fields, name) && fields[name] !== '' ? `${fields[name]},${inverted}` : inverted;
        continue;
      }
      const adds = pjsipOption(object.type, field.name)?.list === true && Object.hasOwn(fields, field.name) && fields[field.name] !== '';
      fields[field.name] = adds ? `${fields[field.name]},${field.value}` : field.value;
    }
    byId[object.id] = fields;
  }
  return { tree: { [CONFIG_CLASS]: types }, errors: read.errors, warnings: read.warnings, fatal, invalid };
}

export class PjsipObjects {
  readonly #context: TechnologyContext;
  readonly #log: Logger;
  #config: PjsipConfig = buildPjsipConfig([]).value;
  /** The configuration before the last change: deleted endpoints are still described by it. */
  #previous: PjsipConfig | undefined;
  #unsubscribe: (() => void) | undefined;
  readonly #logged = new Set<string>();
  /** Endpoints reported reachable (PeerStatusChange). */
  readonly #reachable = new Set<string>();
  readonly #regcontext: RegContext;

  constructor(context: TechnologyContext, log: Logger) {
    this.#context = context;
    this.#log = log;
    this.#regcontext = new RegContext(context.dialplanExtensions);
  }

  get config(): PjsipConfig {
    return this.#config;
  }

  /** Builds the configuration from the dynamic configuration's res_pjsip objects. */
  load(): PjsipConfig {
    const objects: RawPjsipObject[] = [];
    for (const type of PJSIP_OBJECT_TYPES) {
      for (const { id, fields } of this.#context.configObjects.list(CONFIG_CLASS, type)) {
        objects.push({ type, id, fields, where: `res_pjsip/${type}/${id}` });
      }
    }
    const built = buildPjsipConfig(objects);
    for (const line of built.errors) this.#once(line, () => this.#log.error(line));
    for (const line of built.warnings) this.#once(line, () => this.#log.warn(line));
    this.#previous = this.#config;
    this.#config = built.value;
    return built.value;
  }

  /** Objects of `type` the dynamic configuration holds that could not be built (their errors were logged). */
  unbuilt(type: 'acl'): string[] {
    return this.#context.configObjects.list(CONFIG_CLASS, type).map(({ id }) => id).filter((id) => !this.#config.acls.has(id));
  }

  /** Rebuilds on every change of a res_pjsip object and hands the new configuration over. */
  watch(onConfig: (config: PjsipConfig) => void): void {
    this.#unsubscribe?.();
    this.#unsubscribe = this.#context.configObjects.onChange((change) => {
      if (change.configClass !== CONFIG_CLASS) return;
      onConfig(this.load());
    });
  }

  close(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#reachable.clear();
    this.#regcontext.close();
  }

  /**
   * Drops the bindings of AORs that no longer exist or that no endpoint names any more (the
   * endpoint was deleted): its registrations go with it.
   */
  dropOrphanBindings(registrar: Registrar): void {
    const used = new Set<string>();
    for (const endpoint of this.#config.endpoints.values()) for (const aor of endpoint.aors) used.add(aor);
    for (const aor of registrar.aors()) if (!this.#config.aors.has(aor) || !used.has(aor)) registrar.clear(aor);
  }

  /** A binding came, went or expired: ContactStatusChange to the endpoints that use the AOR. */
  bindingChanged(change: BindingChange): void {
    if (change.kind === 'refreshed') return;
    const { binding } = change;
    const added = change.kind === 'added';
    const qualified = (this.#config.aors.get(binding.aor)?.qualifyFrequency ?? 0) > 0;
    // A new contact is NonQualified where qualify_frequency=0, as in Asterisk; where it is qualified
    // it is Unknown until its first OPTIONS is answered (or not): see qualifyChanged.
    const status = added ? (qualified ? 'Unknown' : 'NonQualified') : 'Removed';
    for (const endpoint of this.#endpointsOf(binding.aor)) {
      this.#context.endpoints.publish('PJSIP', endpoint.id, {
        type: 'ContactStatusChange',
        contact_info: { uri: binding.uri, contact_status: status, aor: binding.aor, ...(added ? { roundtrip_usec: '0' } : {}) },
      });
    }
  }

  /** Every contact to qualify: registered and static contacts of AORs with qualify_frequency > 0. */
  qualifyTargets(registrar: Registrar): QualifyTarget[] {
    const targets: QualifyTarget[] = [];
    for (const aor of this.#config.aors.values()) {
      if (aor.qualifyFrequency <= 0) continue;
      // A challenge is answered with the outbound_auth of the first endpoint naming the AOR (Asterisk qualifies as that endpoint).
      const endpoint = this.#endpointsOf(aor.id)[0];
      const credentials = endpoint && endpoint.outboundAuth.length > 0 ? outboundCredentials(this.#config, endpoint.outboundAuth) : undefined;
      const base = {
        aor: aor.id,
        frequency: aor.qualifyFrequency,
        timeout: aor.qualifyTimeout > 0 ? aor.qualifyTimeout : 3,
        ...(aor.qualify2xxOnly ? { only2xx: true } : {}),
        ...(credentials ? { credentials } : {}),
      };
      for (const binding of registrar.lookup(aor.id)) targets.push({ ...base, uri: binding.uri, ...(aor.supportPath && binding.path.length > 0 ? { path: binding.path } : {}) });
      for (const contact of aor.contacts) targets.push({ ...base, uri: contact.replace(/^<|>$/g, '') });
    }
    return targets;
  }

  /** A qualified contact became Reachable or Unreachable: ContactStatusChange with the round trip. */
  qualifyChanged(target: QualifyTarget, state: QualifyState): void {
    for (const endpoint of this.#endpointsOf(target.aor)) {
      this.#context.endpoints.publish('PJSIP', endpoint.id, {
        type: 'ContactStatusChange',
        contact_info: { uri: target.uri, contact_status: state.status, aor: target.aor, roundtrip_usec: String(state.roundtripUsec) },
      });
    }
  }

  /**
   * Endpoints with a binding on one of their AORs are online (EndpointStateChange comes from the
   * endpoint registry); a change of reachability is a PeerStatusChange.
   */
  refreshStates(registrar: Registrar, qualify: QualifyLookup = () => undefined, registeredElsewhere: (aor: string) => boolean = () => false): void {
    const context = this.#context;
    const seen = new Set<string>();
    for (const endpoint of this.#config.endpoints.values()) {
      seen.add(endpoint.id);
      // A registered contact counts unless qualifying found it Unreachable; a static contact counts
      // once qualifying found it Reachable (unqualified static contacts say nothing of the peer).
      const bindings = endpoint.aors.flatMap((aor) => registrar.lookup(aor)).filter((binding) => qualify(binding.aor, binding.uri)?.status !== 'Unreachable');
      const staticReachable = endpoint.aors.some((aorId) =>
        (this.#config.aors.get(aorId)?.contacts ?? []).some((contact) => qualify(aorId, contact.replace(/^<|>$/g, ''))?.status === 'Reachable'),
      );
      // A phone registered through another server (a cluster member) is online too.
      const online = bindings.length > 0 || staticReachable || endpoint.aors.some(registeredElsewhere);
      // As in Asterisk: PeerStatusChange, then EndpointStateChange.
      if (online !== this.#reachable.has(endpoint.id)) {
        if (online) this.#reachable.add(endpoint.id);
        else this.#reachable.delete(endpoint.id);
        const source = bindings[0]?.source;
        context.endpoints.publish('PJSIP', endpoint.id, {
          type: 'PeerStatusChange',
          peer: {
            peer_status: online ? 'Reachable' : 'Unreachable',
            ...(source ? { address: source.address, port: String(source.port) } : {}),
            time: String(Math.floor(Date.now() / 1000)),
          },
        });
      }
      context.endpoints.setState('PJSIP', endpoint.id, online ? 'online' : 'offline');
    }
    // Endpoints deleted while reachable.
    for (const id of [...this.#reachable]) {
      if (seen.has(id)) continue;
      this.#reachable.delete(id);
      context.endpoints.publish('PJSIP', id, { type: 'PeerStatusChange', peer: { peer_status: 'Unreachable', time: String(Math.floor(Date.now() / 1000)) } });
    }
    this.#regcontext.update(this.#config.global.regcontext, this.#reachable);
  }

  #endpointsOf(aor: string): PjsipEndpoint[] {
    const found = [...this.#config.endpoints.values()].filter((endpoint) => endpoint.aors.includes(aor));
    if (found.length > 0 || !this.#previous) return found;
    return [...this.#previous.endpoints.values()].filter((endpoint) => endpoint.aors.includes(aor) && !this.#config.endpoints.has(endpoint.id));
  }

  #once(line: string, log: () => void): void {
    if (this.#logged.has(line)) return;
    if (this.#logged.size >= MAX_REMEMBERED_LINES) this.#logged.clear();
    this.#logged.add(line);
    log();
  }
}
