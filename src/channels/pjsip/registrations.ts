// The `registration` objects of the res_pjsip configuration, live: each becomes an outbound
// registration (src/sip/registration-client.ts) started when it appears, replaced when it changes
// (or an auth it names changes), stopped — unregistering — when it goes or the server stops.
// With `line=yes` the Contact carries a `line` token; requests to it are from `endpoint`.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { outboundCredentials } from './outbound-credentials.ts';
import type { PjsipConfig, PjsipRegistration } from './config/index.ts';
import { OutboundRegistration, type RegistrationStatus } from '../../sip/registration-client.ts';
import type { TransactionLayer } from '../../sip/transaction/index.ts';
import { uriDestination } from '../../sip/dialog.ts';
import type { Destination, TransportProtocol } from '../../sip/transport.ts';
import { transportProtocol } from './listeners.ts';
import { parseUri, type SipUri } from '../../sip/uri.ts';

export interface RegistrationsServices {
  layer(): TransactionLayer | undefined;
  readonly log: Logger;
  readonly signallingHost: string;
  readonly signallingPort: number;
  /** The bound port of a listener (the named transport's, else the first of the protocol). */
  portOf?(protocol: TransportProtocol, listener?: string): number | undefined;
  readonly userAgent: string;
}

/** What `registrations()` reports of each. */
export interface RegistrationInfo {
  readonly id: string;
  readonly serverUri: string;
  readonly clientUri: string;
  readonly status: RegistrationStatus;
  readonly expiresAt: number;
  readonly lastCode?: number;
}

interface Running {
  readonly fingerprint: string;
  readonly client: OutboundRegistration;
  readonly line?: string;
  readonly endpoint?: string;
}

export class OutboundRegistrations {
  readonly #services: RegistrationsServices;
  readonly #running = new Map<string, Running>();
  #closed = false;

  constructor(services: RegistrationsServices) {
    this.#services = services;
  }

  /** Starts, replaces and stops registrations to match the configuration. */
  sync(config: PjsipConfig): void {
    if (this.#closed) return;
    for (const [id, running] of this.#running) {
      const wanted = config.registrations.get(id);
      if (!wanted || this.#fingerprint(wanted, config) !== running.fingerprint) {
        this.#running.delete(id);
        void running.client.stop();
      }
    }
    for (const registration of config.registrations.values()) {
      if (this.#running.has(registration.id)) continue;
      const started = this.#start(registration, config);
      if (started) this.#running.set(registration.id, started);
    }
  }

  /** The endpoint of a `line=yes` registration whose Contact token a request-URI carries. */
  endpointOfLine(line: string | null | undefined): string | undefined {
    if (!line) return undefined;
    for (const running of this.#running.values()) if (running.line === line) return running.endpoint;
    return undefined;
  }

  list(): RegistrationInfo[] {
    return [...this.#running.entries()].map(([id, { client }]) => ({
      id,
      serverUri: client.settings.serverUri.host,
      clientUri: `${client.settings.clientUri.user ?? ''}@${client.settings.clientUri.host}`,
      status: client.status,
      expiresAt: client.expiresAt,
      ...(client.lastCode !== undefined ? { lastCode: client.lastCode } : {}),
    }));
  }

  /** Unregisters everything (each bounded to 2 s, all at once). */
  async close(): Promise<void> {
    this.#closed = true;
    const running = [...this.#running.values()];
    this.#running.clear();
    await Promise.all(running.map((entry) => entry.client.stop()));
  }

  #fingerprint(registration: PjsipRegistration, config: PjsipConfig): string {
    const auths = registration.outboundAuth.map((id) => config.auths.get(id) ?? null);
    const transport = registration.transport ? (config.transports.get(registration.transport)?.protocol ?? null) : null;
    return JSON.stringify([registration, auths, transport]);
  }

  #start(registration: PjsipRegistration, config: PjsipConfig): Running | undefined {
    const { log } = this.#services;
    const server = parseUri(registration.serverUri);
    const client = parseUri(registration.clientUri);
    if (!server || server.kind !== 'sip' || !client || client.kind !== 'sip') {
      log.warn({ registration: registration.id }, 'outbound registration: server_uri and client_uri must be sip: URIs; not started');
      return undefined;
    }
    const proxy = registration.outboundProxy ? parseUri(registration.outboundProxy.replace(/^<|>$/g, '')) : undefined;
    const via: SipUri = proxy && proxy.kind === 'sip' ? proxy : server;
    const transportObject = registration.transport ? config.transports.get(registration.transport) : undefined;
    // The URI's transport (a sips: one: TLS) wins, else the transport section's protocol.
    const named = uriDestination(via);
    const protocol = via.params.has('transport') || via.scheme === 'sips' || !transportObject ? named?.transport ?? 'UDP' : transportProtocol(transportObject);
    // The registration's transport= is the socket it registers from (and the port its Contact names).
    const destination: Destination = {
      transport: protocol,
      host: via.host.replace(/^\[|\]$/g, ''),
      port: via.port ?? (protocol === 'TLS' ? 5061 : 5060),
      ...(transportObject ? { listener: transportObject.id } : {}),
    };
    const contactPort = this.#services.portOf?.(destination.transport, transportObject?.id) ?? this.#services.signallingPort;
    const credentials = outboundCredentials(config, registration.outboundAuth);
    const line = registration.line ? randomBytes(6).toString('hex') : undefined;
    const host = this.#services.signallingHost;
    const hostPart = host.includes(':') ? `[${host}]` : host;
    const contactUser = registration.contactUser ?? 's';
    const scheme = client.scheme === 'sips' || server.scheme === 'sips' ? 'sips' : 'sip';
    const transportParam = protocol === 'UDP' ? '' : `;transport=${protocol.toLowerCase()}`;
    const contact = `${scheme}:${encodeURIComponent(contactUser)}@${hostPart}:${contactPort}${transportParam}${line ? `;line=${line}` : ''}`;
    const outbound = new OutboundRegistration(
      {
        id: registration.id,
        serverUri: server,
        clientUri: client,
        contact,
        expiration: registration.expiration,
        retryInterval: registration.retryInterval,
        forbiddenRetryInterval: registration.forbiddenRetryInterval,
        fatalRetryInterval: registration.fatalRetryInterval,
        maxRetries: registration.maxRetries,
        authRejectionPermanent: registration.authRejectionPermanent,
        credentials,
        destination,
        // user_agent of the registration replaces the global one in its REGISTERs only.
        userAgent: registration.userAgent ?? this.#services.userAgent,
        ...(registration.contactHeaderParams ? { contactHeaderParams: registration.contactHeaderParams } : {}),
        ...(registration.supportPath ? { supported: ['path'] } : {}),
        initialDelayMs: Math.floor(Math.random() * registration.maxRandomInitialDelay * 1000),
      },
      {
        layer: () => this.#services.layer(),
        log,
        onStatus: (id, status, detail) => log.info({ registration: id, status, ...detail }, 'outbound registration status'),
      },
    );
    outbound.start();
    return { fingerprint: this.#fingerprint(registration, config), client: outbound, ...(line ? { line } : {}), ...(registration.endpoint ? { endpoint: registration.endpoint } : {}) };
  }
}
