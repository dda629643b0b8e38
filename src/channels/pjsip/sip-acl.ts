// res_pjsip_acl: every request (in or out of a dialog, retransmissions, CANCEL, ACK) is checked
// against each `type=acl` section before anything else sees it — before the transaction layer, the
// endpoint identification and authentication — as Asterisk's ACL module runs at priority 1, before
// PJSIP's transaction layer. A refused request is answered 403 Forbidden statelessly (an ACK is only
// dropped) and nothing is kept of it: a scan from a refused address grows nothing.
//
// The source address is read into a scratch buffer and compared with precompiled rules: the check
// allocates nothing. Contact ACLs parse the request's Contact headers (only when some section has
// contact rules) and check each IP literal host; a host name is not resolved (Asterisk resolves it
// and lets through one that does not resolve). Refusals are logged as Asterisk logs them (a NOTICE
// naming the ACL, a WARNING naming the source), at most one pair a second with a count of the rest.
import type { Logger } from 'pino';
import type { SipRequest } from '../../sip/message.ts';
import type { Source } from '../../sip/transport-types.ts';
import type { TransactionLayer } from '../../sip/transaction/index.ts';
import { parseAclRule, readAddressInto, rulesAllowBytes, type AclRule } from '../../util/acl.ts';
import { LogThrottle } from '../../util/log-throttle.ts';
import { formatUri } from '../../sip/uri.ts';
import type { NamedAcl } from '../../config/ari-users.ts';
import { readAclConfBeside, settingsAcls, type NamedRules } from './acl-conf.ts';
import type { AclLists, PjsipAcl, PjsipConfig } from './config/types.ts';

/** One chain of an ACL list: the section's own lines (`''`, Asterisk's BASELINE) or a named ACL. */
interface Chain {
  readonly name: string;
  readonly rules: readonly AclRule[];
  /** A named ACL that is missing or could not be read: refuses every address (Asterisk's is_invalid). */
  readonly invalid: boolean;
}

interface CompiledAcl {
  readonly id: string;
  readonly source: readonly Chain[];
  readonly contact: readonly Chain[];
}

const LOG_INTERVAL_MS = 1000;

function chains(rules: readonly AclRule[], names: readonly string[], named: ReadonlyMap<string, NamedRules>, problems: string[], owner: string): Chain[] {
  const out: Chain[] = [];
  if (rules.length > 0) out.push({ name: '', rules, invalid: false });
  for (const name of names) {
    const found = named.get(name.toLowerCase());
    if (!found) problems.push(`[${owner}] acl ${name}: no such ACL in acl.conf (or ari.acls); it refuses every address, as in Asterisk`);
    out.push({ name, rules: found?.rules ?? [], invalid: !found || found.invalid });
  }
  return out;
}

export class SipAcl {
  readonly #acls: readonly CompiledAcl[];
  readonly #anyContact: boolean;
  readonly #log: Logger;
  /** The address being checked (IPv6 needs 16 bytes); reused, so a check allocates nothing. */
  readonly #scratch = new Uint8Array(16);
  readonly #sourceLog: LogThrottle;
  readonly #contactLog: LogThrottle;
  /** An endpoint's own ACL logs as pjsip_distributor.c does (the request, "Not match Endpoint ACL"); undefined for type=acl. */
  readonly #endpoint: boolean;

  /**
   * The sections compiled against the named ACLs; undefined when there is nothing to check.
   * `problems` gets one line per ACL name that refers to nothing; `now` is the log throttle's clock.
   */
  static compile(acls: Iterable<AclLists & { readonly id: string }>, named: ReadonlyMap<string, NamedRules>, log: Logger, problems: string[], now: () => number = Date.now, endpoint = false): SipAcl | undefined {
    const compiled: CompiledAcl[] = [];
    for (const acl of acls) {
      const source = chains(acl.rules, acl.acl, named, problems, acl.id);
      const contact = chains(acl.contactRules, acl.contactAcl, named, problems, acl.id);
      if (source.length > 0 || contact.length > 0) compiled.push({ id: acl.id, source, contact });
    }
    return compiled.length > 0 ? new SipAcl(compiled, log, now, endpoint) : undefined;
  }

  private constructor(acls: CompiledAcl[], log: Logger, now: () => number, endpoint: boolean) {
    this.#endpoint = endpoint;
    this.#sourceLog = new LogThrottle(LOG_INTERVAL_MS, now);
    this.#contactLog = new LogThrottle(LOG_INTERVAL_MS, now);
    this.#acls = acls;
    this.#anyContact = acls.some((acl) => acl.contact.length > 0);
    this.#log = log;
  }

  /**
   * A request before the transaction layer: when refused, answered 403 Forbidden without a
   * transaction (an ACK is only dropped), and true.
   */
  screen(request: SipRequest, source: Source, layer: Pick<TransactionLayer, 'respondStateless'> | undefined): boolean {
    if (!this.refuses(request, source)) return false;
    if (request.method !== 'ACK') layer?.respondStateless(request, 403, source);
    return true;
  }

  /** Whether a request from `source` is refused by some section. */
  refuses(request: SipRequest, source: Source): boolean {
    const scratch = this.#scratch;
    const length = readAddressInto(source.address, scratch);
    for (let a = 0; a < this.#acls.length; a++) {
      const acl = this.#acls[a]!;
      if (acl.source.length > 0) {
        const failed = this.#failedChain(acl.source, scratch, length);
        if (failed) {
          this.#refused(this.#sourceLog, 'SIP ACL: ', failed, source.address, request, source);
          return true;
        }
      }
    }
    return this.#anyContact && this.#contactRefused(request, source);
  }

  /** Contact ACLs, only when some section has them: each Contact's IP host in turn. */
  #contactRefused(message: SipRequest, source: Source): boolean {
    if (!message.has('contact')) return false;
    const contacts = message.contacts();
    if (contacts === 'wildcard') return false;
    for (const contact of contacts) {
      if (contact.uri.kind !== 'sip') continue;
      const host = contact.uri.host;
      const length = readAddressInto(host, this.#scratch);
      if (length === 0) continue; // a host name: not resolved here
      for (const acl of this.#acls) {
        if (acl.contact.length === 0) continue;
        const failed = this.#failedChain(acl.contact, this.#scratch, length);
        if (failed) {
          this.#refused(this.#contactLog, 'SIP Contact ACL: ', failed, host, message, source);
          return true;
        }
      }
    }
    return false;
  }

  /** The first chain that refuses the address, or undefined. An unreadable address passes no rule. */
  #failedChain(list: readonly Chain[], address: Uint8Array, length: 0 | 4 | 16): Chain | undefined {
    for (let c = 0; c < list.length; c++) {
      const chain = list[c]!;
      if (chain.invalid) return chain;
      if (length === 0) {
        if (chain.rules.length > 0) return chain;
        continue;
      }
      if (!rulesAllowBytes(chain.rules, address, length)) return chain;
    }
    return undefined;
  }

  #refused(throttle: LogThrottle, prefix: string, chain: Chain, address: string, request: SipRequest, source: Source): void {
    throttle.run((suppressed) => {
      const more = suppressed > 0 ? { suppressed } : {};
      const name = chain.name === '' ? '(BASELINE)' : chain.name;
      if (chain.invalid) this.#log.warn(more, `${prefix}Rejecting '${address}' due to use of an invalid ACL '${name}'.`);
      else this.#log.info(more, `${prefix}Rejecting '${address}' due to a failure to pass ACL '${name}'`);
      const sender = `${source.address.includes(':') ? `[${source.address}]` : source.address}:${source.port}`;
      if (!this.#endpoint) {
        // res_pjsip_acl names the Contact host (port 0) for a Contact refusal, the source otherwise.
        const named = prefix === 'SIP ACL: ' ? sender : `${address.includes(':') ? `[${address}]` : address}:0`;
        this.#log.warn(more, `Incoming SIP message from ${named} did not pass ACL test`);
        return;
      }
      const from = request.from()?.uri;
      const what = prefix === 'SIP ACL: ' ? 'Not match Endpoint ACL' : 'Not match Endpoint Contact ACL';
      this.#log.info(more, `Request '${request.method}' from '${from ? `<${formatUri(from)}>` : ''}' failed for '${sender}' (callid: ${request.callId() ?? ''}) - ${what}`);
    });
  }
}

/** What a section that could not be built becomes, as in Asterisk: a chain refusing every address. */
const BLOCK_ALL: readonly AclRule[] = ['0.0.0.0/0', '::/0'].map((entry) => parseAclRule(entry, false) as AclRule);

/**
 * The ACL of a configuration: its `type=acl` sections against acl.conf beside `pjsipConf` (read now)
 * and the settings' named ACLs. A section that could not be built (`unbuilt`: a bad entry in the
 * YAML's config_objects; pjsip.conf's stop start-up instead) blocks everything, as Asterisk's
 * res_pjsip_acl does. Problems are logged once per build; undefined when nothing is checked.
 */
export function buildSipAcl(config: PjsipConfig, unbuilt: readonly string[], pjsipConf: string | null | undefined, settingsNamed: ReadonlyMap<string, NamedAcl>, log: Logger): SipAcl | undefined {
  if (config.acls.size === 0 && unbuilt.length === 0) return undefined;
  return compileSections(config, unbuilt, readNamedAcls(pjsipConf, settingsNamed, log), log);
}

/** acl.conf beside `pjsipConf` (read now; its problems logged) over the settings' named ACLs. */
export function readNamedAcls(pjsipConf: string | null | undefined, settingsNamed: ReadonlyMap<string, NamedAcl>, log: Logger): Map<string, NamedRules> {
  const read = readAclConfBeside(pjsipConf);
  const named = settingsAcls(settingsNamed);
  for (const [key, acl] of read.acls) named.set(key, acl);
  for (const line of read.errors) log.error(line);
  for (const line of read.warnings) log.warn(line);
  return named;
}

/** The `type=acl` sections (and the `unbuilt` ones, blocking everything) against the named ACLs. */
export function compileSections(config: PjsipConfig, unbuilt: readonly string[], named: ReadonlyMap<string, NamedRules>, log: Logger): SipAcl | undefined {
  const blocked: PjsipAcl[] = unbuilt.map((id) => ({ type: 'acl', id, rules: BLOCK_ALL, acl: [], contactRules: [], contactAcl: [] }));
  if (blocked.length > 0) log.error(`There is an error in ACL configuration (${unbuilt.join(', ')}). Blocking ALL SIP traffic.`);
  if (config.acls.size === 0 && blocked.length === 0) return undefined;
  const problems: string[] = [];
  const acl = SipAcl.compile([...config.acls.values(), ...blocked], named, log, problems);
  for (const line of problems) log.error(line);
  return acl;
}
