// The SIP channel technology, `PJSIP` (alias `SIP`), module `chan_pjsip.so`: adapts our SIP stack
// (src/sip: transport, transactions, dialogs, digest, SDP, registrar) to the core's technology
// seam. Endpoints, AORs, auths and identifies are Asterisk's res_pjsip objects of the dynamic
// configuration (the YAML `config_objects.res_pjsip`, an Asterisk `pjsip.conf` given as
// `sip.pjsip_conf`, and objects PUT through ARI), live: see objects.ts.
//
// This file owns the SIP stack's lifetime, the state the roles share (runtime.ts) and the roles;
// request-router.ts hands each request to the role that plays it (register.ts, invite-server.ts,
// messaging.ts, subscriptions/server.ts — dialog, presence, message-summary —, the calls).
// Unsolicited MWI to contacts of endpoints with mailboxes= → subscriptions/unsolicited-mwi.ts.
// Dialling → dialer.ts; ARI messages and refers out → messaging.ts, refer-sender.ts; GET /metrics → stats.ts.
import type { PatchbayConfig } from '../../config/config.ts';
import { SipTrace } from '../../sip/trace.ts';
import { SipLadder } from './sip-ladder.ts';
import type { Logger } from 'pino';
import type { Channel } from '../../core/channels/channel.ts';
import type { ChannelRequest, ChannelTechnology, TechnologyContext } from '../../core/channels/technology.ts';
import { RtpPortRange } from '../../media/rtp/port-range.ts';
import { buildSipAcls, type SipAcls } from './endpoint-acl.ts';
import { Registrar } from '../../sip/registrar.ts';
import type { ContactDirectory } from './contact-directory.ts';
import { listContacts, type ContactRow } from './contact-listing.ts';
import type { FlowRelay } from './flow-relay.ts';
import { TechnologyFlowHost } from './flow-host.ts';
import { TransactionLayer } from '../../sip/transaction/index.ts';
import type { ListenerSettings, SipTransportSet } from '../../sip/transport-set.ts';
import { openSipListeners } from '../../sip/stack.ts';
import type { TransportProtocol } from '../../sip/transport.ts';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { LogThrottle } from '../../util/log-throttle.ts';
import { parseUri } from '../../sip/uri.ts';
import type { CallServices, SipCall } from './call.ts';
import { CallRegistry } from './call-registry.ts';
import { CallStreams } from './call-streams.ts';
import type { MediaWorkerPool } from '../../media/workers/pool.ts';
import { buildPjsipConfig, type PjsipConfig } from './config/index.ts';
import { Dialer } from './dialer.ts';
import { EndpointIdentifier } from './identify.ts';
import { InboundAuthenticator } from './inbound-auth.ts';
import { InviteServer } from './invite-server.ts';
import { SipMessaging } from './messaging.ts';
import { PjsipObjects } from './objects.ts';
import { ContactQualifier } from './qualify.ts';
import { ReferSender } from './refer-sender.ts';
import { RegisterServer } from './register.ts';
import { IncomingMwi } from './incoming-mwi.ts';
import { RequestRouter } from './request-router.ts';
import { OutboundRegistrations, type RegistrationInfo } from './registrations.ts';
import { USER_AGENT, type PjsipRuntime } from './runtime.ts';
import { collectSipStats, type SipStats } from './stats.ts';
import { CallTransfers } from './transfers.ts';
import { SubscriptionServer } from './subscriptions/server.ts';
import { UnsolicitedMwi } from './subscriptions/unsolicited-mwi.ts';
import { registerPjsipWithCore } from './dialplan.ts';
import { objectSourceOf } from './object-functions.ts';
import { isWebSocketSource, listenersOf, outboundNatOf, webSocketTransportOf } from './listeners.ts';

export type { SipStats } from './stats.ts';

export class PjsipTechnology implements ChannelTechnology {
  readonly name = 'PJSIP';
  readonly aliases = ['SIP'] as const;
  readonly description = 'PJSIP Channel Driver';
  readonly module = {
    name: 'chan_pjsip.so',
    description: 'PJSIP Channel Driver',
    // sip.enabled: false starts the server without SIP (no listener, no media workers).
    autoload: (config: PatchbayConfig): boolean => config.sip.enabled,
  };
  #context: TechnologyContext | undefined;
  #log: Logger | undefined;
  #transport: SipTransportSet | undefined;
  #layer: TransactionLayer | undefined;
  #config: PjsipConfig = buildPjsipConfig([]).value;
  #registrar = new Registrar();
  #objects: PjsipObjects | undefined;
  /** The `type=acl` sections (sip-acl.ts) and the endpoints' own ACLs (endpoint-acl.ts) compiled. */
  #acl: SipAcls | undefined;
  #qualifier: ContactQualifier | undefined;
  #registrations: OutboundRegistrations | undefined;
  #contactDirectory: ContactDirectory | undefined;
  /** Dialogs over another server's connection (flow-relay.ts), a cluster member's. */
  #flowRelay: FlowRelay | undefined;
  #unwatchDirectory: (() => void) | undefined;
  #host = '127.0.0.1';
  #publicHost = '127.0.0.1';
  /** The system section's compact_headers, read at start (the transports write with it from then on). */
  #compactHeaders = false;
  /** The host SIP over WebSocket writes in Via and Contact (external when configured: no per-destination rewriting there). */
  #webSocketHost = '127.0.0.1';
  /** `#mediaAddress` is an external address written for every destination (no per-destination rewriting). */
  #mediaAddressExternal = false;
  #mediaAddress = '127.0.0.1';
  #port = 0;
  /** The live calls, found by dialog (Call-ID and tags): see call-registry.ts. */
  readonly #calls = new CallRegistry<SipCall>();
  readonly #services: CallServices;
  readonly #runtime: PjsipRuntime;
  readonly #streams: CallStreams;
  readonly #auth: InboundAuthenticator;
  readonly #tcpRefusalLog = new LogThrottle(10_000);
  readonly #inviteServer: InviteServer;
  readonly #messaging: SipMessaging;
  readonly #dialer: Dialer;
  readonly #referSender: ReferSender;
  readonly #subscriptions: SubscriptionServer;
  readonly #unsolicitedMwi: UnsolicitedMwi;
  /** Who answers each request (request-router.ts). */
  readonly #router: RequestRouter;
  /**
   * A call's media ended with a round-trip time measured by RTCP: the last one, in seconds (the
   * server feeds GET /metrics' histogram with it).
   */
  onCallRoundTrip: ((seconds: number) => void) | undefined;
  /** `sip trace on|off`: the SIP messages of matching calls into the log. */
  readonly sipTrace = new SipTrace();
  /** The console's SIP ladder: the last messages of each dialog, fed by the trace's tap. */
  readonly sipLadder = new SipLadder();

  constructor() {
    const technology = this;
    this.sipTrace.tap((message, direction, transport, host, port) => this.sipLadder.record(message, direction, transport, host, port));
    this.#services = {
      get layer() {
        return technology.#layer!;
      },
      get log() {
        return technology.#log!;
      },
      get signallingHost() {
        return technology.#publicHost;
      },
      get signallingPort() {
        return technology.#port;
      },
      portOf: (protocol, listener) => technology.#transport?.port(protocol, listener),
      get mediaAddress() {
        return technology.#mediaAddress;
      },
      get mediaAddressExternalEverywhere() {
        return technology.#mediaAddressExternal;
      },
      get unansweredMediaMs() {
        return technology.#context?.config.sip.rtpUnansweredMs ?? 0;
      },
      // The global section's user_agent, read when each request is written (it may change live).
      get userAgent() {
        return technology.#config.global.userAgent || USER_AGENT;
      },
      get allowSending180After183() {
        return technology.#config.global.allowSending180After183;
      },
      get compactHeaders() {
        return technology.#compactHeaders;
      },
      // pjsip's gate on later SDP answers, as the system section says now.
      get systemEarlyAnswers() {
        const { followEarlyMediaFork, acceptMultipleSdpAnswers } = technology.#config.system;
        return { followEarlyMediaFork, acceptMultipleSdpAnswers };
      },
      get musicOnHold() {
        return technology.#context?.musicOnHold;
      },
      get workerRelay() {
        return technology.#context?.config.media.workerRelay ?? true;
      },
      get workerMix() {
        return technology.#context?.config.media.workerMix ?? true;
      },
      get workerPlayback() {
        return technology.#context?.config.media.workerPlayback ?? true;
      },
      get workerRecording() {
        return technology.#context?.config.media.workerRecording ?? true;
      },
      openStream: (call) => this.#streams.open(call),
      forget: (call) => {
        call.relayedFlow?.release();
        this.#calls.delete(call);
      },
    };
    this.#runtime = {
      get context() {
        return technology.#context;
      },
      get log() {
        return technology.#log;
      },
      get layer() {
        return technology.#layer;
      },
      get config() {
        return technology.#config;
      },
      get registrar() {
        return technology.#registrar;
      },
      get qualifier() {
        return technology.#qualifier;
      },
      get registrations() {
        return technology.#registrations;
      },
      get contactDirectory() {
        return technology.#contactDirectory;
      },
      get flowRelay() {
        return technology.#flowRelay;
      },
      calls: this.#calls,
      get publicHost() {
        return technology.#publicHost;
      },
      get port() {
        return technology.#port;
      },
      services: this.#services,
    };
    const runtime = this.#runtime;
    this.#streams = new CallStreams(runtime, (seconds) => this.onCallRoundTrip?.(seconds));
    this.#auth = new InboundAuthenticator(runtime, new EndpointIdentifier(runtime), () => this.#acl?.endpoints);
    const transfers = new CallTransfers(runtime);
    this.#dialer = new Dialer(runtime, transfers);
    this.#inviteServer = new InviteServer(runtime, this.#auth, transfers);
    this.#messaging = new SipMessaging(runtime, this.#auth, this.#dialer);
    this.#referSender = new ReferSender(runtime, this.#dialer);
    // Each asks the other: a mailbox sent unsolicited refuses a SUBSCRIBE for it, one subscribed to is not sent unsolicited.
    this.#unsolicitedMwi = new UnsolicitedMwi(runtime, this.#dialer, (endpointId, mailbox) => this.#subscriptions.solicits(endpointId, mailbox));
    this.#subscriptions = new SubscriptionServer(runtime, this.#auth, (endpoint, mailbox) => this.#unsolicitedMwi.covers(endpoint, mailbox));
    const roles = { auth: this.#auth, registerServer: new RegisterServer(runtime, this.#auth), inviteServer: this.#inviteServer, messaging: this.#messaging, referSender: this.#referSender, subscriptions: this.#subscriptions, incomingMwi: new IncomingMwi(runtime, this.#auth) };
    this.#router = new RequestRouter(runtime, roles);
  }

  /**
   * Reads the configuration files again (pjsip.conf) for a module reload; the server sets it, as
   * the files are read above this floor. Throws when the files have errors (the running objects stay).
   */
  reloadConfig: (() => void) | undefined;

  /** `module reload chan_pjsip.so` and SIGHUP: endpoints, auths, aors, identifies and registrations follow the file; calls go on. */
  reload(): void {
    if (!this.reloadConfig) throw new Error('chan_pjsip.so has no configuration file to reload');
    this.#reloadCertificates();
    this.reloadConfig();
  }

  /**
   * TLS transports read their certificate, key and CA files again (renewed on disk): new
   * connections use them. One that cannot be used keeps the old ones, with an ERROR line.
   */
  #reloadCertificates(): void {
    const failures = this.#transport?.reloadTls() ?? [];
    for (const failure of failures) this.#log?.error({ transport: failure.name, err: failure.error }, `TLS transport ${failure.name}: new certificates refused (${failure.error}); the previous ones stay in use`);
  }

  /** Set when the defaulted SIP listener could not be opened. */
  #unavailable: string | undefined;

  /** The port SIP listens on (the first UDP listener's, else the first TCP one's), once started. */
  get port(): number {
    return this.#port;
  }

  /** Why SIP does not listen (a defaulted port was taken), or undefined while it does or is not started. */
  get unavailableReason(): string | undefined {
    return this.#unavailable;
  }

  /** The media workers the calls' RTP runs in (media.workers), while started with some. */
  get mediaWorkers(): MediaWorkerPool | undefined {
    return this.#streams.pool;
  }

  /** Figures for GET /metrics, read when scraped. */
  stats(): SipStats {
    return { ...collectSipStats(this.#runtime, this.#streams.totals, this.#auth.failures, this.#subscriptions.size), mediaWorkers: this.#streams.workerLoads() };
  }

  /** Every listener with its bound port, once started. */
  listeners(): { name: string; protocol: TransportProtocol; host: string; port: number | undefined }[] {
    return this.#transport?.listeners() ?? [];
  }

  get config(): PjsipConfig {
    return this.#config;
  }

  /** The registered contacts of every AOR, with their qualify status (`pjsip show contacts`). */
  contacts(): ContactRow[] {
    return listContacts(this.#config, this.#registrar, this.#qualifier, this.#contactDirectory);
  }

  /**
   * Where this server's registrations are shared and other servers' are found (a cluster member
   * sets it once it has joined): what the registrar holds now is shared at once, then every change.
   */
  set contactDirectory(directory: ContactDirectory | undefined) {
    this.#unwatchDirectory?.();
    this.#unwatchDirectory = undefined;
    this.#contactDirectory = directory;
    directory?.share(this.#registrar.aors().flatMap((aor) => this.#registrar.lookup(aor)));
    // Endpoints registered through other servers count as online here too.
    this.#unwatchDirectory = directory?.onChange?.(() => this.#refreshStates());
    this.#refreshStates();
  }

  /** Calls over another cluster member's connection to a phone, and this member's connections lent to others (flow-relay.ts). */
  set flowRelay(relay: FlowRelay | undefined) {
    this.#flowRelay = relay;
    relay?.attach(new TechnologyFlowHost(this.#runtime, () => this.#transport, this.sipTrace));
  }

  /** The outbound registrations (`type=registration`) and where each stands. */
  registrations(): RegistrationInfo[] {
    return this.#registrations?.list() ?? [];
  }

  async start(context: TechnologyContext): Promise<void> {
    this.#context = context;
    registerPjsipWithCore(context, objectSourceOf(this.#runtime));
    const log = context.log.child({ module: 'chan_pjsip' });
    this.#log = log;
    const settings = context.config.sip;
    // The res_pjsip objects of the dynamic configuration (YAML, pjsip.conf, ARI), live.
    const objects = new PjsipObjects(context, log);
    this.#objects = objects;
    this.#config = objects.load();
    this.#acl = buildSipAcls(this.#config, objects.unbuilt('acl'), settings.pjsipConf, context.config.ari.acls, log);
    const realm = this.#config.global.defaultRealm || 'asterisk';
    this.#inviteServer.maxCallsPerEndpoint = settings.maxCallsPerEndpoint;
    const failed = settings.failedAuth;
    this.#auth.configure(realm, settings.authAlgorithms, {
      maxPerSource: failed.maxPerSource,
      maxPerEndpoint: failed.maxPerEndpoint,
      windowSeconds: failed.windowSeconds,
      blockSeconds: failed.blockSeconds,
      tracked: failed.trackedAddresses,
    });
    this.#registrar = new Registrar();
    const technology = this;
    this.#qualifier = new ContactQualifier({
      layer: () => this.#layer,
      get signallingHost() {
        return technology.#publicHost;
      },
      get signallingPort() {
        return technology.#port;
      },
      // The global section's user_agent, read when each request is written (it may change live).
      get userAgent() {
        return technology.#config.global.userAgent || USER_AGENT;
      },
      log,
      destinationOf: (uri) => {
        const parsed = parseUri(uri.replace(/^<|>$/g, ''));
        return parsed && parsed.kind === 'sip' ? this.#dialer.destinationOf(parsed) : undefined;
      },
      onChange: (target, state) => {
        this.#objects?.qualifyChanged(target, state);
        this.#refreshStates();
      },
    });
    this.#registrar.onChange((change) => {
      this.#objects?.bindingChanged(change);
      this.#contactDirectory?.bindingChanged(change);
      if (change.kind !== 'refreshed') this.#syncQualify();
      this.#refreshStates();
      // As res_pjsip_mwi: a contact added or updated hears its endpoint's unsolicited MWI.
      if (change.kind === 'added' || change.kind === 'refreshed') this.#unsolicitedMwi.contactChanged(change.binding);
    });
    objects.watch((config) => {
      this.#config = config;
      // A reload's ACL (and acl.conf read again) applies to the next request.
      this.#acl = buildSipAcls(config, objects.unbuilt('acl'), settings.pjsipConf, context.config.ari.acls, log);
      if (this.#layer) this.#layer.maxForwards = config.global.maxForwards;
      this.#transport?.setKeepAliveInterval(config.global.keepAliveInterval);
      this.#objects?.dropOrphanBindings(this.#registrar);
      this.#syncQualify();
      this.#registrations?.sync(config);
      this.#refreshStates();
    });
    this.#host = settings.bind || context.config.http.bind;
    if (this.#host === 'localhost') this.#host = '127.0.0.1';
    const listeners = this.#listeners(settings);
    this.#compactHeaders = this.#config.system.compactHeaders;
    const webSocket = webSocketTransportOf([...this.#config.transports.values()], this.#webSocketHost, settings.tcp, log);
    const { transport, layer } = openSipListeners(
      listeners,
      {
        onRequest: (request, tx) => this.#router.handle(request, tx),
        onAck: () => undefined,
        onDrop: (reason, source) => log.debug({ reason, source: `${source.address}:${source.port}` }, 'SIP request refused'),
      },
      // The system section's timers are read at start, as Asterisk does not reload them.
      { timers: { t1: this.#config.system.timerT1, timerB: this.#config.system.timerB } },
      (reason, source, status) => {
        if (/^too many (TCP|TLS) (connections|handshakes)/.test(reason)) {
          // A flood of connections: one line per interval, with how many were refused meanwhile.
          this.#tcpRefusalLog.run((suppressed) => log.warn({ reason, source: source.address, ...(suppressed > 0 ? { suppressed } : {}) }, `SIP ${source.transport} connection refused`));
          return;
        }
        log.debug({ reason, source: `${source.address}:${source.port}`, status }, 'SIP message dropped');
      },
      {
        compactHeaders: this.#compactHeaders,
        maxConnections: settings.tcp.maxConnections,
        maxConnectionsPerSource: settings.tcp.maxConnectionsPerSource,
        idleTimeoutMs: settings.tcp.idleTimeoutSeconds * 1000,
        firstMessageTimeoutMs: settings.tcp.firstMessageTimeoutSeconds * 1000,
      },
      this.sipTrace,
      webSocket,
      { screen: (request, source) => this.#acl?.sections?.screen(request, source, this.#layer) ?? false, divert: (message, source) => this.#flowRelay?.divert(message, source) ?? false, connectionClosed: (connection) => this.#flowRelay?.connectionClosed(connection) },
    );
    // A browser's registrations live as long as its WebSocket: nothing can reach it once that closes.
    transport.webSocket?.onClosed((connection) => this.#registrar.removeWhere((binding) => isWebSocketSource(binding.source.transport) && binding.source.address === connection.remoteAddress && binding.source.port === connection.remotePort));
    this.sipTrace.attach((text, fields) => log.info({ ...fields, sipTrace: true }, text));
    this.#transport = transport;
    this.#layer = layer;
    layer.maxForwards = this.#config.global.maxForwards;
    layer.rport = !this.#config.system.disableRport;
    try {
      await transport.start();
    } catch (error) {
      const where = listeners.map((listener) => `${listener.name} ${listener.protocols.join('+')} ${listener.host}:${listener.port}`).join(', ');
      this.#layer.close();
      this.#layer = undefined;
      this.#transport = undefined;
      // A transport the administrator configured (pjsip.conf, config_objects, sip.port/sip.bind)
      // that cannot listen stops start-up like a taken HTTP port. With the embedded defaults ARI
      // goes on without SIP, loudly: /health says degraded and /metrics patchbay_sip_listening 0.
      const explicit = this.#config.transports.size > 0 || ['sip.port', 'sip.bind'].some((key) => Object.hasOwn(context.config.origin.explicit, key));
      if (explicit) throw error;
      const code = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
      this.#unavailable = `SIP could not listen on ${where}: ${code}`;
      log.error({ err: error, listeners: where }, `${this.#unavailable}; SIP is unavailable (the default port; configure sip.port or a transport to make this fatal)`);
      return;
    }
    transport.setKeepAliveInterval(this.#config.global.keepAliveInterval);
    // Media (and its worker threads) only once SIP listens: a start-up that fails leaves no worker behind.
    this.#streams.configure(this.#host, new RtpPortRange(settings.rtpPortStart, Math.max(settings.rtpPortStart + 2, settings.rtpPortEnd)), context.config.media.workers);
    const bound = transport.listeners();
    this.#port = transport.port('UDP') ?? transport.port('TCP') ?? transport.port('TLS') ?? settings.port;
    context.messages.setTransport({
      send: (message, destination) => this.#messaging.send(message, destination),
      refer: (refer, destination) => this.#referSender.send(refer, destination),
    });
    for (const listener of bound) log.info({ transport: listener.name, protocol: listener.protocol, host: listener.host, port: listener.port }, 'SIP listening');
    log.info({ endpoints: this.#config.endpoints.size }, `SIP listening on ${bound.map((listener) => `${listener.protocol} ${listener.host}:${listener.port}`).join(', ')}`);
    this.#syncQualify();
    this.#registrations = new OutboundRegistrations({
      layer: () => this.#layer,
      log,
      get signallingHost() {
        return technology.#publicHost;
      },
      get signallingPort() {
        return technology.#port;
      },
      portOf: (protocol, listener) => technology.#transport?.port(protocol, listener),
      // The global section's user_agent, read when each request is written (it may change live).
      get userAgent() {
        return technology.#config.global.userAgent || USER_AGENT;
      },
    });
    this.#registrations.sync(this.#config);
    this.#subscriptions.start();
    this.#unsolicitedMwi.start();
  }

  /**
   * Where SIP listens: each udp/tcp transport of the configuration at its `bind` (pjsip.conf as
   * Asterisk reads it), else — no transport configured, the YAML way — UDP and TCP on `sip.bind`
   * and `sip.port`. Also settles the address written in Contact and SDP.
   */
  #listeners(settings: TechnologyContext['config']['sip']): ListenerSettings[] {
    const transports = [...this.#config.transports.values()];
    const first = transports[0];
    const wildcard = (host: string) => host === '0.0.0.0' || host === '::';
    const boundHost = first && !wildcard(first.bind.host) ? first.bind.host : this.#host;
    // Behind NAT with local networks (or an external port), messages are written with the local
    // addresses and the transport puts in the external ones per destination (listeners.ts outboundNatOf).
    const perDestination = first !== undefined && outboundNatOf(first, settings.externalAddress) !== undefined;
    this.#webSocketHost = first?.externalSignalingAddress || settings.externalAddress || boundHost;
    this.#publicHost = perDestination ? boundHost : this.#webSocketHost;
    const externalMedia = perDestination ? undefined : first?.externalMediaAddress || settings.externalAddress || undefined;
    this.#mediaAddressExternal = externalMedia !== undefined;
    this.#mediaAddress = externalMedia ?? (wildcard(this.#host) && perDestination ? boundHost : this.#host);
    // ws/wss transports listen on the HTTP server (listeners.ts webSocketTransportOf); with only those, UDP and TCP stay the YAML way.
    const sockets = transports.filter((transport) => !isWebSocketSource(transport.protocol));
    if (sockets.length === 0) return [{ name: 'sip', protocols: ['UDP', 'TCP'], host: this.#host, port: settings.port, publicHost: this.#publicHost }];
    return listenersOf(sockets, settings.externalAddress);
  }

  /** The HTTP server listens: its address goes in the Via and Contact of what is sent over WebSockets. */
  webSocketListening(port: number): void {
    this.#transport?.webSocket?.advertise(this.#webSocketHost, port);
  }

  /**
   * An HTTP upgrade of `/ws` (the HTTP server's thin hook): handed to the SIP WebSocket transport;
   * false when none is configured (the caller answers 404).
   */
  handleWebSocketUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const webSocket = this.#transport?.webSocket;
    if (!webSocket) return false;
    webSocket.handleUpgrade(request, socket, head);
    return true;
  }

  async stop(): Promise<void> {
    this.#subscriptions.stop();
    this.#unsolicitedMwi.stop();
    for (const call of [...this.#calls.values()]) if (!call.channel.hangingUp) call.channel.hangup(16);
    this.#calls.clear();
    this.#qualifier?.close();
    this.#qualifier = undefined;
    // Outbound registrations are removed at the registrar (bounded wait) while the transport still runs.
    await this.#registrations?.close();
    this.#registrations = undefined;
    this.#objects?.close();
    this.#objects = undefined;
    this.#registrar.close();
    this.#layer?.close();
    await this.#transport?.close();
    await this.#streams.stop();
    this.#layer = undefined;
    this.#transport = undefined;
    this.#context?.messages.setTransport(undefined);
    this.#context = undefined;
  }

  /** Endpoints with at least one binding on one of their AORs are online. */
  #refreshStates(): void {
    // EndpointStateChange through the registry, PeerStatusChange on a change of reachability.
    const qualifier = this.#qualifier;
    const directory = this.#contactDirectory;
    this.#objects?.refreshStates(this.#registrar, qualifier ? (aor, uri) => qualifier.state(aor, uri) : undefined, directory ? (aor) => directory.contactsOf(aor).length > 0 : undefined);
  }

  /** Qualifies the contacts of AORs with qualify_frequency > 0 (see qualify.ts). */
  #syncQualify(): void {
    if (!this.#objects || !this.#qualifier || !this.#layer) return;
    this.#qualifier.sync(this.#objects.qualifyTargets(this.#registrar));
  }

  // ---- outbound ---------------------------------------------------------------------------------

  /** `PJSIP/alice`, `PJSIP/5551234@trunk`, `PJSIP/alice/sip:alice@192.0.2.1:5062`. */
  request(request: ChannelRequest): Channel {
    return this.#dialer.request(request);
  }
}
