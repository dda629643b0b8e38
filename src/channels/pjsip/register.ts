// REGISTER (RFC 3261 §10) for our endpoints: the endpoint is identified and authenticated, the To
// user must be one of its AORs (or its own name when it has one AOR); the bindings follow the
// AOR's rules (max_contacts, remove_existing, expiry bounds) in the registrar. With the endpoint's
// rewrite_contact, the first Contact is stored as the address and port the REGISTER came from (a
// phone behind NAT), while the 200 OK lists it as the phone wrote it, as Asterisk does.
// With the AOR's support_path (RFC 3327, res_pjsip_path) a REGISTER's Path is kept with its
// bindings (the dialer and the qualifier route through it) and echoed in the 200 with
// `Supported: path`; a Path the phone did not say it supports was added behind its back: 420.
import type { SipRequest } from '../../sip/message.ts';
import { rewriteContactToSource } from '../../sip/nat.ts';
import type { BindingSource } from '../../sip/registrar.ts';
import type { ServerTransaction } from '../../sip/transaction/index.ts';
import type { TransportProtocol } from '../../sip/transport.ts';
import type { InboundAuthenticator } from './inbound-auth.ts';
import { namesInDomain } from './identify.ts';
import { formatContactUri, nameAddr } from './addresses.ts';
import { type PjsipRuntime } from './runtime.ts';
import { parseNameAddr } from '../../sip/uri.ts';

/** Path entries kept per REGISTER at most, each at most MAX_PATH_ENTRY characters: a bound on what a peer makes us store. */
const MAX_PATH_ENTRIES = 8;
const MAX_PATH_ENTRY = 512;

export class RegisterServer {
  readonly #runtime: PjsipRuntime;
  readonly #auth: InboundAuthenticator;

  constructor(runtime: PjsipRuntime, auth: InboundAuthenticator) {
    this.#runtime = runtime;
    this.#auth = auth;
  }

  register(request: SipRequest, tx: ServerTransaction): void {
    const endpoint = this.#auth.admit(request, tx);
    if (!endpoint) return;
    const to = request.to()?.uri;
    const aorName = to && to.kind === 'sip' ? to.user : undefined;
    // Multi-domain as Asterisk: the AOR `user@domain`, then `user@<aliased domain>`, then `user`.
    const named = aorName ? namesInDomain(aorName, to?.kind === 'sip' ? to.host : '', this.#runtime.config).find((name) => endpoint.aors.includes(name)) : undefined;
    const aorId = named ?? (endpoint.aors.length === 1 && aorName === endpoint.id ? endpoint.aors[0] : undefined);
    const aor = aorId === undefined ? undefined : this.#runtime.config.aors.get(aorId);
    if (!aor) {
      tx.reply(404, 'Not Found');
      return;
    }
    const path = aor.supportPath ? pathOf(request) : [];
    if (path === undefined) {
      tx.reply(400, 'Bad Path');
      return;
    }
    if (path.length > 0 && !request.values('supported').some((tag) => tag.trim().toLowerCase() === 'path')) {
      this.#runtime.log?.warn({ endpoint: endpoint.id }, 'REGISTER: Path without Supported: path (a proxy on the way modified the request); 420');
      tx.reply(420, 'Bad Extension', [['Unsupported', 'path']]);
      return;
    }
    const qualifier = this.#runtime.qualifier;
    const reported = endpoint.rewriteContact ? rewriteContactToSource(request, tx.source) : undefined;
    const contacts = request.contacts();
    const outcome = this.#runtime.registrar.register(
      {
        aor: aor.id,
        wildcard: contacts === 'wildcard',
        contacts: contacts === 'wildcard' ? [] : contacts.map((contact, index) => ({ uri: formatContactUri(contact.uri), expires: numberParam(contact.params.get('expires')), ...(index === 0 && reported !== undefined ? { reportedUri: reported } : {}) })),
        expires: request.expires(),
        callId: request.callId() ?? '',
        cseq: request.cseq()?.seq ?? 0,
        userAgent: request.get('user-agent') ?? '',
        source: { transport: bindingTransport(tx.source.transport), address: tx.source.address, port: tx.source.port, ...(tx.source.listener !== undefined ? { listener: tx.source.listener } : {}) },
        ...(path.length > 0 ? { path } : {}),
        ...(aor.removeUnavailable && qualifier ? { unavailable: (binding) => qualifier.state(binding.aor, binding.uri)?.status === 'Unreachable' } : {}),
      },
      aor,
    );
    if (outcome.status === 423) {
      tx.reply(423, 'Interval Too Brief', [['Min-Expires', String(outcome.minExpires)]]);
      return;
    }
    if (outcome.status !== 200) {
      tx.reply(outcome.status, outcome.reason);
      return;
    }
    const now = Date.now();
    const headers: Array<[string, string]> = outcome.bindings.map((binding) => ['Contact', nameAddr(binding.reportedUri ?? binding.uri, [['expires', String(Math.max(0, Math.round((binding.expiresAt - now) / 1000)))]])]);
    headers.push(['Date', new Date(now).toUTCString()]);
    if (aor.supportPath) {
      headers.push(['Supported', 'path']);
      if (path.length > 0) headers.push(['Path', path.join(', ')]);
    }
    tx.reply(200, undefined, headers);
  }
}

function numberParam(value: string | null | undefined): number | undefined {
  if (value === undefined || value === null || !/^\d{1,10}$/.test(value)) return undefined;
  return Number(value);
}

/** How a binding remembers the transport its REGISTER came over (a TCP, TLS or WebSocket phone is called back on that connection). */
function bindingTransport(protocol: TransportProtocol): BindingSource['transport'] {
  return protocol === 'TLS' ? 'tls' : protocol === 'TCP' ? 'tcp' : protocol === 'WS' ? 'ws' : protocol === 'WSS' ? 'wss' : 'udp';
}

/** The Path entries of a REGISTER in order (RFC 3327 §5.3), [] without any; undefined when one is not a SIP name-addr or there are too many. */
function pathOf(request: SipRequest): string[] | undefined {
  const values = request.values('path');
  if (values.length > MAX_PATH_ENTRIES) return undefined;
  const path: string[] = [];
  for (const value of values) {
    const parsed = value.length <= MAX_PATH_ENTRY ? parseNameAddr(value) : undefined;
    if (!parsed || parsed.uri.kind !== 'sip') return undefined;
    path.push(value.trim());
  }
  return path;
}
