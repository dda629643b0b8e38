// The `acl` (res_pjsip_acl) and `system` (res_pjsip/config_system.c) object types. An ACL section's
// permit/deny lines are one ordered list, as Asterisk appends each line to one rule chain; its
// `acl=` names (acl.conf sections) are resolved where the rules are applied (../sip-acl.ts), since
// acl.conf is not part of the res_pjsip objects. A bad entry is an error: Asterisk turns it into
// "deny everything"; here the object cannot be built, which stops start-up and refuses a reload
// (objects.ts), so no section is ever left out silently.
import { parseAclRule, type AclRule } from '../../../util/acl.ts';
import { bool, custom, declareObject, int, MAX_LIST_ITEMS, type Draft, type Option } from './options.ts';
import type { AclLists, PjsipAcl, PjsipEndpoint, PjsipSystem } from './types.ts';
import { parseBool, parseInteger, shown, splitList } from './values.ts';

/** Most rules (or named ACLs) one list of one section holds; more is refused at start-up. */
const MAX_ACL_RULES = MAX_LIST_ITEMS;
const ACL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

type AclDraft = Draft<PjsipAcl>;
type Lists = { -readonly [K in keyof AclLists]: AclLists[K] };
/** Where a draft keeps its four lists: a type=acl section is them; an endpoint has them in `acls`. */
type ListsOf<D> = (draft: D) => Lists;

const sectionLists: ListsOf<AclDraft> = (draft) => draft;
// Copied before a change: a draft's lists may be its template's object.
const endpointLists: ListsOf<Draft<PjsipEndpoint>> = (draft) => (draft.acls = { ...draft.acls });

/** `permit`/`deny` (or their `contact_` forms): each comma-separated entry appended in order. */
function aclRules<D>(lists: ListsOf<D>, key: 'rules' | 'contactRules', permit: boolean, doc: string): Option<D> {
  return custom<D>({ list: true, doc }, (draft, value, report) => {
    const target = lists(draft);
    const rules: AclRule[] = [...target[key]];
    for (const item of splitList(value)) {
      if (rules.length >= MAX_ACL_RULES) return report.fail(`more than ${MAX_ACL_RULES} permit/deny entries in one section (split them over several type=acl sections)`);
      const rule = parseAclRule(item, permit);
      if (typeof rule === 'string') return report.fail(`bad ACL entry ${shown(item)}: ${rule}`);
      rules.push(rule);
    }
    target[key] = rules;
  });
}

/** `acl`/`contact_acl`: acl.conf section names, appended; a name twice is an error, as in Asterisk. */
function aclNames<D>(lists: ListsOf<D>, key: 'acl' | 'contactAcl', doc: string): Option<D> {
  return custom<D>({ list: true, doc }, (draft, value, report) => {
    const target = lists(draft);
    const names = [...target[key]];
    for (const name of splitList(value)) {
      if (!ACL_NAME.test(name)) return report.fail(`${shown(name)} is not an ACL name (1–64 letters, digits, _, . or -)`);
      if (names.some((known) => known.toLowerCase() === name.toLowerCase())) return report.fail(`named ACL ${shown(name)} occurs multiple times`);
      if (names.length >= MAX_ACL_RULES) return report.fail(`more than ${MAX_ACL_RULES} named ACLs`);
      names.push(name);
    }
    target[key] = names;
  });
}

const ENTRY_DOC = 'comma-separated `[!]address[/mask]` (IPv4 or IPv6, mask as prefix length or netmask; `!` inverts)';

export const ACL = declareObject<PjsipAcl, AclDraft>({
  type: 'acl',
  initial: (id) => ({ type: 'acl', id, rules: [], acl: [], contactRules: [], contactAcl: [] }),
  options: {
    permit: aclRules(sectionLists, 'rules', true, `Source addresses allowed: ${ENTRY_DOC}; with \`deny\`, in the order written, the last match wins.`),
    deny: aclRules(sectionLists, 'rules', false, `Source addresses refused (403, before anything else): ${ENTRY_DOC}.`),
    acl: aclNames(sectionLists, 'acl', 'acl.conf sections the source address must also pass (acl.conf beside pjsip.conf, else `ari.acls`).'),
    contact_permit: aclRules(sectionLists, 'contactRules', true, `Contact header hosts allowed, as \`permit\` (IP literals; a host name is not resolved).`),
    contact_deny: aclRules(sectionLists, 'contactRules', false, 'Contact header hosts refused (403), as `deny`.'),
    contact_acl: aclNames(sectionLists, 'contactAcl', 'acl.conf sections the Contact hosts must also pass.'),
  },
  finish: (draft) => draft,
});

export const NO_ACL: AclLists = { rules: [], acl: [], contactRules: [], contactAcl: [] };

/**
 * An endpoint's own ACL (pjsip_configuration.c's endpoint_acl_handler): the same lists, checked once
 * a request is identified to the endpoint; one that fails is handled as from no endpoint (a
 * challenge, as Asterisk's artificial endpoint), so a refusal does not tell the endpoint exists.
 */
export const ENDPOINT_ACL_OPTIONS = {
  // Asterisk's order of the fields (deny before permit): objects from the YAML or ARI, one value per
  // option, are applied in this order, so `deny=0.0.0.0/0` + `permit=10.0.0.0/8` means what it says.
  deny: aclRules(endpointLists, 'rules', false, `Source addresses the endpoint's requests may not come from: ${ENTRY_DOC}; with \`permit\`, in the order written (in the YAML and ARI: deny, then permit), the last match wins. A request identified to the endpoint from a refused address is handled as from no endpoint (401 challenge; credentials never pass).`),
  permit: aclRules(endpointLists, 'rules', true, 'Source addresses the endpoint\'s requests may come from, as `deny`.'),
  acl: aclNames(endpointLists, 'acl', 'acl.conf sections the source address of the endpoint\'s requests must also pass (acl.conf beside pjsip.conf, else `ari.acls`).'),
  contact_deny: aclRules(endpointLists, 'contactRules', false, 'Contact header hosts refused in the endpoint\'s requests, as `deny`.'),
  contact_permit: aclRules(endpointLists, 'contactRules', true, 'Contact header hosts allowed in the endpoint\'s requests, as `permit` (IP literals; a host name is not resolved).'),
  contact_acl: aclNames(endpointLists, 'contactAcl', 'acl.conf sections the Contact hosts of the endpoint\'s requests must also pass.'),
};

// ---- system -----------------------------------------------------------------------------------

type SystemDraft = Draft<PjsipSystem>;

const TIMER_T1_MIN = 100;

/** A pool size of Asterisk's threads: checked as Asterisk reads it, and named as meaningless here. */
const poolSize = (name: string, fallback: string): Option<SystemDraft> =>
  custom<SystemDraft>({ default: fallback, doc: 'Accepted and ignored: Patchbay runs SIP on Node.js\'s event loop, it has no PJSIP thread pool (a start-up note says so).' }, (_draft, value, report) => {
    const result = parseInteger(value, 0, 2_147_483_647);
    if (!result.ok) return report.fail(result.error);
    report.warn(`system option ${name} has no meaning for Patchbay (no PJSIP thread pool: SIP runs on the event loop); ignored`);
  });

/**
 * A yes/no of Asterisk's that Patchbay does not act on: checked as a yes/no, and named at start-up
 * when it asks for other than what Patchbay does (`keeps`; undefined: named whatever its value).
 */
const notActedOn = (name: string, fallback: 'yes' | 'no', keeps: boolean | undefined, doc: string, behaviour: string): Option<SystemDraft> =>
  custom<SystemDraft>({ default: fallback, doc, implemented: keeps !== undefined }, (_draft, value, report) => {
    const result = parseBool(value);
    if (!result.ok) return report.fail(result.error);
    if (keeps !== undefined && result.value !== keeps) report.warn(`system option ${name}=${value.trim()} is not implemented by Patchbay: ${behaviour}`);
  });

export function defaultPjsipSystem(id = 'system'): PjsipSystem {
  return { type: 'system', id, timerT1: 500, timerB: 32000, disableRport: false, compactHeaders: false, followEarlyMediaFork: true, acceptMultipleSdpAnswers: false };
}

const POOLS = ['minimum_size', 'initial_size', 'auto_increment', 'idle_timeout', 'max_size'] as const;
const POOL_DEFAULTS: Record<(typeof POOLS)[number], string> = { minimum_size: '4', initial_size: '4', auto_increment: '1', idle_timeout: '60', max_size: '50' };

export const SYSTEM = declareObject<PjsipSystem, SystemDraft>({
  type: 'system',
  initial: defaultPjsipSystem,
  options: {
    timer_t1: int('timerT1', 0, 2_147_483_647, { default: '500', doc: 'T1 of the SIP transactions (ms): retransmissions start at T1 and double; below 100 is raised to 100 with a warning. Read at start (as Asterisk, not at reload).' }),
    timer_b: int('timerB', 0, 2_147_483_647, { default: '32000', doc: 'Timer B and F (ms): how long a request of Patchbay\'s waits for a final answer; below 64×T1 is raised to it with a warning. Read at start.' }),
    compact_headers: bool('compactHeaders', { default: 'no', doc: '`yes`: the requests and responses Patchbay sends use the compact header names pjsip writes (`v`, `f`, `t`, `i`, `m`, `l`, `c`, `e`, `s`, `k`, `o`, `u`, `x`), and its SDP leaves out the `a=rtpmap` of static payload types. Read at start.' }),
    ...Object.fromEntries(
      POOLS.flatMap((pool) => [
        [`threadpool_${pool}`, poolSize(`threadpool_${pool}`, POOL_DEFAULTS[pool])],
        [`taskpool_${pool}`, poolSize(`taskpool_${pool}`, POOL_DEFAULTS[pool])],
      ]).filter(([name]) => name !== 'threadpool_minimum_size'),
    ),
    disable_tcp_switch: notActedOn('disable_tcp_switch', 'yes', true, 'Always `yes` in effect: a request larger than the MTU stays on UDP (`no`, switching to TCP, is a warning).', 'requests stay on their transport whatever their size'),
    disable_rport: bool('disableRport', { default: 'no', doc: '`yes`: the Via of the requests Patchbay sends does not ask for rport (RFC 3581). Read at start.' }),
    follow_early_media_fork: bool('followEarlyMediaFork', {
      default: 'yes',
      doc: 'An 18x with SDP from another fork (another To tag) after the early media\'s is taken as the answer (pjsip\'s gate; the endpoint\'s `follow_early_media_fork` then decides whether the media moves); `no`: ignored. A 2xx from another fork is taken whatever its value.',
    }),
    accept_multiple_sdp_answers: bool('acceptMultipleSdpAnswers', {
      default: 'no',
      doc: 'A later SDP in an 18x or the 2xx of the early dialog whose unreliable 18x set the media is taken (pjsip\'s gate; the endpoint\'s `accept_multiple_sdp_answers` then decides); `no`: ignored.',
    }),
  },
  finish(draft, report) {
    if (draft.timerT1 < TIMER_T1_MIN) {
      report.warn(`Timer T1 setting is too low. Setting to ${TIMER_T1_MIN}`);
      draft.timerT1 = TIMER_T1_MIN;
    }
    if (draft.timerB < 64 * draft.timerT1) {
      report.warn(`Timer B setting is too low. Setting to ${64 * draft.timerT1}`);
      draft.timerB = 64 * draft.timerT1;
    }
    return draft;
  },
});
