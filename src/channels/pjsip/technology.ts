// The SIP channel technology, `PJSIP` (alias `SIP`), module `chan_pjsip.so`: adapts our SIP stack
// (src/sip: transport, transactions, dialogs, digest, SDP, registrar) to the core's technology
// seam. Endpoints, AORs, auths and identifies are Asterisk's res_pjsip objects of the dynamic
// configuration (the YAML `config_objects.res_pjsip`, an Asterisk `pjsip.conf` given as
// `sip.pjsip_conf`, and objects PUT through ARI), live: see objects.ts.
//
// - REGISTER: the endpoint is identified, authenticated (digest) when it names an auth, the To user
//   must be one of its AORs; bindings follow the AOR's rules; an endpoint with a binding is online.
// - INVITE: identified and authenticated the same way; a `PJSIP/<endpoint>-<n>` channel in state
//   Ring runs the endpoint's context at the dialled user part; the app decides what is answered.
// - MESSAGE out of a dialog: TextMessageReceived for the endpoint (X- headers as variables), then
//   the endpoint's message_context dialplan (MESSAGE(), MESSAGE_DATA(), MessageSend()), 202.
// - OPTIONS: 200. Anything else outside a dialog: 405.
// - Dialling `PJSIP/alice` or `PJSIP/5551234@trunk` sends an INVITE to the AOR's registered
//   contacts (the newest first) or its static `contact`; no contact → the request fails at once.
import type { Logger } from 'pino';
import type { Channel } from '../../core/channels/channel.ts';
import type { ChannelRequest, ChannelTechnology, TechnologyContext } from '../../core/channels/technology.ts';
import { InvalidError, NotFoundError, UnavailableError } from '../../core/errors.ts';
import type { TextMessage, MessageDestination, ReferRequest } from '../../core/messages.ts';
import type { TransferProgressState } from '../../core/channels/technology.ts';
import { DigestAuthenticator } from '../../sip/auth/digest.ts';
import { buildPjsipConfig, type PjsipConfig, type PjsipEndpoint } from './config/index.ts';
import { identifyMatchesAddress } from './config/index.ts';
import { newCallId, newTag, SipRequest } from '../../sip/message.ts';
import { Registrar, type Binding } from '../../sip/registrar.ts';
import { ServerTransaction, TransactionLayer } from '../../sip/transaction.ts';
import { SipTransport, type Destination, type Source } from '../../sip/transport.ts';
import { uriDestination } from '../../sip/dialog.ts';
import { parseUri, type SipUri } from '../../sip/uri.ts';
import { ALLOW, SipCall, type CallServices } from './call.ts';
import { PjsipObjects } from './objects.ts';
import { ContactQualifier } from './qualify.ts';
import { IncomingTransfer, parseReferTo, ReferSubscriptions, SIPFRAG } from './refer.ts';
import { OutboundRegistrations, type RegistrationInfo } from './registrations.ts';
import { RtpPortRange, RtpStream, RtpStreamTotals } from '../../media/rtp/stream.ts';

const USER_AGENT = 'Patchbay';
/** Most calls at once that the technology keeps (each holds a socket and a dialog). */
const MAX_CALLS = 4096;
/** X- headers carried as message variables, at most this many. */
const MAX_MESSAGE_VARIABLES = 32;
/** Strict-RTP stranger warnings: at most this many lines per window; the rest are counted into the next line. */
const STRANGER_WARNINGS_PER_WINDOW = 10;
const STRANGER_WARNING_WINDOW_MS = 60_000;
/** Headers an ARI refer's variables may not set: Asterisk's list, plus the REFER's own Refer-To and Event. */
const REFER_BLOCKED_HEADERS = new Set(['to', 'from', 'via', 'route', 'contact', 'call-id', 'cseq', 'allow', 'content-length', 'content-type', 'request-uri', 'refer-to', 'event']);

/** What GET /metrics reports of SIP. */
export interface SipStats {
  readonly clientTransactions: number;
  readonly serverTransactions: number;
  /** Registered contacts, all AORs together. */
  readonly bindings: number;
  readonly calls: number;
  /** Packets the live calls' far ends sent that never arrived. */
  readonly rtpLost: number;
  /** The largest interarrival jitter of the live calls, in seconds. */
  readonly rtpJitterMax: number;
  readonly outboundRegistrations: number;
  readonly outboundRegistered: number;
  /** Since start (ended calls and live ones): RTP packets strict RTP dropped from other sources. */
  readonly rtpStrangerPackets: number;
  /** Since start: RTCP packets dropped because they came from elsewhere than the far end. */
  readonly rtcpStrangerReports: number;
  /** Since start: packets the jitter buffers dropped as too late, and frames they concealed. */
  readonly jitterBufferLatePackets: number;
  readonly jitterBufferConcealedFrames: number;
  /** The jitter buffers' target delay over the live calls that have one: mean and largest, in seconds. */
  readonly jitterBufferTargetDelayMean: number;
  readonly jitterBufferTargetDelayMax: number;
}

export class PjsipTechnology implements ChannelTechnology {
  readonly name = 'PJSIP';
  readonly aliases = ['SIP'] as const;
  readonly description = 'PJSIP Channel Driver';
  readonly module = { name: 'chan_pjsip.so', description: 'PJSIP Channel Driver' };
  #context: TechnologyContext | undefined;
  #log: Logger | undefined;
  #transport: SipTransport | undefined;
  #layer: TransactionLayer | undefined;
  #config: PjsipConfig = buildPjsipConfig([]).value;
  #registrar = new Registrar();
  #objects: PjsipObjects | undefined;
  #qualifier: ContactQualifier | undefined;
  #registrations: OutboundRegistrations | undefined;
  #auth = new DigestAuthenticator({ realm: 'asterisk' });
  #ports = new RtpPortRange(10000, 20000);
  #host = '127.0.0.1';
  #publicHost = '127.0.0.1';
  #mediaAddress = '127.0.0.1';
  #port = 0;
  /** Calls by Call-ID. */
  readonly #calls = new Map<string, SipCall>();
  /** REFERs we sent, whose NOTIFYs are answered 200. */
  readonly #referSubscriptions = new ReferSubscriptions();
  /** Transfers the far end asked for on a call (REFER), handled by the application. */
  readonly #transfers = new WeakMap<SipCall, IncomingTransfer>();
  readonly #services: CallServices;
  /** What every call's media dropped and concealed since start (GET /metrics). */
  readonly #mediaTotals = new RtpStreamTotals();
  #strangerWindowStart = 0;
  #strangerWarnings = 0;
  #strangerWarningsSuppressed = 0;
  /**
   * A call's media ended with a round-trip time measured by RTCP: the last one, in seconds (the
   * server feeds GET /metrics' histogram with it).
   */
  onCallRoundTrip: ((seconds: number) => void) | undefined;

  constructor() {
    const technology = this;
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
      get mediaAddress() {
        return technology.#mediaAddress;
      },
      userAgent: USER_AGENT,
      openStream: async (call) => {
        const context = this.#context!;
        const sockets = await this.#ports.bindPair(this.#host);
        const media = context.media;
        const clock = { get ticks() { return media.clock.ticks; }, onTick: (listener: () => void) => media.onTick(listener), offTick: (listener: () => void) => media.offTick(listener) };
        const sip = context.config.sip;
        const stream: RtpStream = new RtpStream(sockets.rtp, clock, {
          onFrame: (frame) => call.deliver(frame),
          onDigit: (digit, ms) => call.digit(digit, ms),
          onStranger: (address, port) => this.#warnStranger(call, address, port),
          onClosed: () => {
            if (stream.rtcp.rttSpread.count > 0) this.onCallRoundTrip?.(stream.rtcp.rtt);
          },
        }, {
          totals: this.#mediaTotals,
          rtcpSocket: sockets.rtcp,
          rtcpIntervalMs: sip.rtcpIntervalMs,
          strictRtp: sip.strictRtp,
          probation: sip.rtpProbation,
          ...(sip.jitterbuffer ? { jitterBuffer: { minDelayMs: sip.jitterbufferMinDelayMs, maxDelayMs: sip.jitterbufferMaxDelayMs } } : {}),
        });
        return stream;
      },
      forget: (call) => {
        if (this.#calls.get(call.callId) === call) this.#calls.delete(call.callId);
      },
    };
  }

  /** The port SIP listens on (UDP and TCP), once started. */
  get port(): number {
    return this.#port;
  }

  /** Figures for GET /metrics, read when scraped. */
  stats(): SipStats {
    const counts = this.#layer?.counts ?? { clients: 0, servers: 0, pending2xx: 0 };
    let bindings = 0;
    for (const aor of this.#registrar.aors()) bindings += this.#registrar.lookup(aor).length;
    let rtpLost = 0;
    let rtpJitterMax = 0;
    const totals = this.#mediaTotals;
    let latePackets = totals.latePackets;
    let concealedFrames = totals.concealedFrames;
    let delaySum = 0;
    let delayMax = 0;
    let buffers = 0;
    for (const call of this.#calls.values()) {
      const stream = call.stream;
      // A closed stream's counts are in the totals already.
      const jitterBuffer = stream && !stream.closed ? stream.jitterBuffer : undefined;
      if (jitterBuffer) {
        latePackets += jitterBuffer.late;
        concealedFrames += jitterBuffer.concealed;
        const delay = jitterBuffer.targetDelayMs / 1000;
        delaySum += delay;
        delayMax = Math.max(delayMax, delay);
        buffers += 1;
      }
      const statistics = stream?.statistics();
      if (!statistics) continue;
      rtpLost += statistics.rxploss;
      rtpJitterMax = Math.max(rtpJitterMax, statistics.rxjitter);
    }
    const registrations = this.registrations();
    return {
      clientTransactions: counts.clients,
      serverTransactions: counts.servers,
      bindings,
      calls: this.#calls.size,
      rtpLost,
      rtpJitterMax,
      outboundRegistrations: registrations.length,
      outboundRegistered: registrations.filter((registration) => registration.status === 'Registered').length,
      rtpStrangerPackets: totals.strangerPackets,
      rtcpStrangerReports: totals.strangerReports,
      jitterBufferLatePackets: latePackets,
      jitterBufferConcealedFrames: concealedFrames,
      jitterBufferTargetDelayMean: buffers > 0 ? delaySum / buffers : 0,
      jitterBufferTargetDelayMax: delayMax,
    };
  }

  /**
   * One warning line per call the first time strict RTP drops a stranger's packet after the far
   * end's source was learned; at most STRANGER_WARNINGS_PER_WINDOW lines a minute over all calls
   * (a scan of the RTP port range must not flood the log), the lines left out counted in the next.
   */
  #warnStranger(call: SipCall, address: string, port: number): void {
    const now = Date.now();
    if (now - this.#strangerWindowStart >= STRANGER_WARNING_WINDOW_MS) {
      this.#strangerWindowStart = now;
      this.#strangerWarnings = 0;
    }
    if (this.#strangerWarnings >= STRANGER_WARNINGS_PER_WINDOW) {
      this.#strangerWarningsSuppressed += 1;
      return;
    }
    this.#strangerWarnings += 1;
    const suppressed = this.#strangerWarningsSuppressed;
    this.#strangerWarningsSuppressed = 0;
    const channel = call.channel?.name;
    this.#log?.warn(
      { channel, stranger: `${address.includes(':') ? `[${address}]` : address}:${port}`, ...(suppressed > 0 ? { suppressed } : {}) },
      `strict RTP: dropping RTP from ${address}:${port} on ${channel ?? 'a SIP call'} (not the call's far end)`,
    );
  }

  get config(): PjsipConfig {
    return this.#config;
  }

  /** The outbound registrations (`type=registration`) and where each stands. */
  registrations(): RegistrationInfo[] {
    return this.#registrations?.list() ?? [];
  }

  async start(context: TechnologyContext): Promise<void> {
    this.#context = context;
    const log = context.log.child({ module: 'chan_pjsip' });
    this.#log = log;
    const settings = context.config.sip;
    // The res_pjsip objects of the dynamic configuration (YAML, pjsip.conf, ARI), live.
    const objects = new PjsipObjects(context, log);
    this.#objects = objects;
    this.#config = objects.load();
    const realm = this.#config.global.defaultRealm || 'asterisk';
    // What is offered is sip.auth_algorithms (MD5 alone by default): many phones answer only the first
    // challenge, or give up on an algorithm they do not know (baresip 1.0 on SHA-256).
    this.#auth = new DigestAuthenticator({ realm, algorithms: settings.authAlgorithms.filter((name) => name === 'MD5' || name === 'SHA-256') });
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
      userAgent: USER_AGENT,
      log,
      destinationOf: (uri) => {
        const parsed = parseUri(uri.replace(/^<|>$/g, ''));
        return parsed && parsed.kind === 'sip' ? this.#destinationOf(parsed) : undefined;
      },
      onChange: (target, state) => {
        this.#objects?.qualifyChanged(target, state);
        this.#refreshStates();
      },
    });
    this.#registrar.onChange((change) => {
      this.#objects?.bindingChanged(change);
      if (change.kind !== 'refreshed') this.#syncQualify();
      this.#refreshStates();
    });
    objects.watch((config) => {
      this.#config = config;
      this.#objects?.dropOrphanBindings(this.#registrar);
      this.#syncQualify();
      this.#registrations?.sync(config);
      this.#refreshStates();
    });
    this.#ports = new RtpPortRange(settings.rtpPortStart, Math.max(settings.rtpPortStart + 2, settings.rtpPortEnd));
    this.#host = settings.bind || context.config.http.bind;
    if (this.#host === 'localhost') this.#host = '127.0.0.1';
    const transportObject = [...this.#config.transports.values()][0];
    this.#publicHost = transportObject?.externalSignalingAddress || settings.externalAddress || this.#host;
    this.#mediaAddress = transportObject?.externalMediaAddress || settings.externalAddress || this.#host;
    const transport = new SipTransport(
      // TCP follows the port UDP bound (the same one when sip.port is 0), as phones expect.
      { host: this.#host, udpPort: settings.port, publicHost: this.#publicHost },
      { onDrop: (reason, source, status) => log.debug({ reason, source: `${source.address}:${source.port}`, status }, 'SIP message dropped') },
    );
    this.#transport = transport;
    this.#layer = new TransactionLayer(transport, {
      onRequest: (request, tx) => this.#onRequest(request, tx),
      onAck: () => undefined,
      onDrop: (reason, source) => log.debug({ reason, source: `${source.address}:${source.port}` }, 'SIP request refused'),
    });
    try {
      await transport.start();
    } catch (error) {
      // A taken port is not fatal to the server: ARI goes on without SIP, loudly.
      log.error({ err: error, host: this.#host, port: settings.port }, 'SIP transport could not listen; SIP is unavailable');
      this.#layer.close();
      this.#layer = undefined;
      this.#transport = undefined;
      // The UDP socket may be bound when TCP failed: release it, or it keeps the process alive.
      await transport.close().catch(() => undefined);
      return;
    }
    this.#port = transport.port('UDP') ?? transport.port('TCP') ?? settings.port;
    context.messages.setTransport({
      send: (message, destination) => this.#sendMessage(message, destination),
      refer: (refer, destination) => this.#sendRefer(refer, destination),
    });
    log.info({ host: this.#host, port: this.#port, endpoints: this.#config.endpoints.size }, 'SIP listening (UDP and TCP)');
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
      userAgent: USER_AGENT,
    });
    this.#registrations.sync(this.#config);
  }

  async stop(): Promise<void> {
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
    this.#layer = undefined;
    this.#transport = undefined;
    this.#context?.messages.setTransport(undefined);
    this.#context = undefined;
  }

  // ---- requests ---------------------------------------------------------------------------------

  #onRequest(request: SipRequest, tx: ServerTransaction): void {
    try {
      this.#route(request, tx);
    } catch (error) {
      this.#log?.error({ err: error, method: request.method }, 'SIP request handling failed');
      tx.reply(500);
    }
  }

  #route(request: SipRequest, tx: ServerTransaction): void {
    const callId = request.callId() ?? '';
    const inDialog = request.toTag() !== undefined;
    if (inDialog) {
      const call = this.#calls.get(callId);
      if (!call) {
        // The NOTIFYs of a REFER we sent (its implicit subscription).
        if (request.method === 'NOTIFY' && this.#referSubscriptions.notify(callId, request.get('subscription-state'))) {
          this.#log?.debug({ callId, sipfrag: request.body.toString('utf8').split('\r\n')[0]?.slice(0, 100) }, 'REFER progress');
          tx.reply(200);
          return;
        }
        tx.reply(481, 'Call/Transaction Does Not Exist');
        return;
      }
      call.inDialog(request, tx);
      return;
    }
    switch (request.method) {
      case 'OPTIONS':
        tx.reply(200, undefined, [['Allow', ALLOW], ['Accept', 'application/sdp, text/plain'], ['Server', USER_AGENT]]);
        return;
      case 'REGISTER':
        this.#register(request, tx);
        return;
      case 'INVITE':
        void this.#invite(request, tx);
        return;
      case 'MESSAGE':
        this.#message(request, tx);
        return;
      case 'BYE':
        tx.reply(481, 'Call/Transaction Does Not Exist');
        return;
      default:
        tx.reply(405, undefined, [['Allow', ALLOW]]);
    }
  }

  /** endpoint_identifier_order: by source address (identify), by From user, then `anonymous`. */
  #identify(request: SipRequest, source: Source): PjsipEndpoint | undefined {
    const config = this.#config;
    // A request to the Contact of a line=yes registration comes from that registration's endpoint.
    const lineEndpoint = request.uri.kind === 'sip' ? this.#registrations?.endpointOfLine(request.uri.params.get('line')) : undefined;
    if (lineEndpoint !== undefined && config.endpoints.has(lineEndpoint)) return config.endpoints.get(lineEndpoint);
    for (const method of config.global.endpointIdentifierOrder) {
      if (method === 'ip') {
        for (const identify of config.identifies.values()) {
          if (identifyMatchesAddress(identify.match, source.address)) {
            const endpoint = config.endpoints.get(identify.endpoint);
            if (endpoint) return endpoint;
          }
        }
      } else if (method === 'username' || method === 'auth_username') {
        const from = request.from()?.uri;
        const user = from && from.kind === 'sip' ? from.user : undefined;
        if (user) {
          const endpoint = config.endpoints.get(user);
          if (endpoint && (endpoint.identifyBy.includes('username') || endpoint.identifyBy.includes('auth_username'))) return endpoint;
        }
      } else if (method === 'anonymous') {
        const endpoint = config.endpoints.get('anonymous');
        if (endpoint) return endpoint;
      }
    }
    return undefined;
  }

  /**
   * Digest authentication for endpoints that name an auth. Returns true when the request may go
   * on; otherwise it has been answered (401 with a challenge, or 403).
   */
  #authenticate(request: SipRequest, tx: ServerTransaction, endpoint: PjsipEndpoint | undefined): endpoint is PjsipEndpoint {
    if (!endpoint) {
      // Unknown senders get a challenge first, as known ones do, so names cannot be probed.
      if (request.authorization().length === 0) tx.reply(401, undefined, this.#auth.challenge().map((value) => ['WWW-Authenticate', value] as [string, string]));
      else tx.reply(403, 'Forbidden');
      return false;
    }
    if (endpoint.auth.length === 0) return true;
    const auths = endpoint.auth.map((id) => this.#config.auths.get(id)).filter((auth) => auth !== undefined);
    const result = this.#auth.verify({
      method: request.method,
      authorization: request.authorization(),
      lookup: (username) => {
        const auth = auths.find((candidate) => candidate.username === username);
        if (!auth) return undefined;
        if (auth.authType === 'md5' && auth.md5Cred) return { md5Cred: auth.md5Cred };
        return { password: auth.password ?? '' };
      },
    });
    if (result.ok) return true;
    if (result.reason === 'missing' || result.reason === 'stale' || result.reason === 'bad-nonce') {
      const md5Only = auths.some((auth) => auth.authType === 'md5');
      const challenges = this.#auth.challenge({ stale: result.reason === 'stale', ...(md5Only ? { algorithms: ['MD5'] as const } : {}) });
      tx.reply(401, undefined, challenges.map((value) => ['WWW-Authenticate', value] as [string, string]));
      return false;
    }
    this.#log?.info({ endpoint: endpoint.id, reason: result.reason, source: `${tx.source.address}:${tx.source.port}` }, 'SIP authentication failed');
    tx.reply(403, 'Forbidden');
    return false;
  }

  #register(request: SipRequest, tx: ServerTransaction): void {
    const endpoint = this.#identify(request, tx.source);
    if (!this.#authenticate(request, tx, endpoint)) return;
    const to = request.to()?.uri;
    const aorName = to && to.kind === 'sip' ? to.user : undefined;
    const aorId = aorName && endpoint.aors.includes(aorName) ? aorName : endpoint.aors.length === 1 && aorName === endpoint.id ? endpoint.aors[0] : undefined;
    const aor = aorId === undefined ? undefined : this.#config.aors.get(aorId);
    if (!aor) {
      tx.reply(404, 'Not Found');
      return;
    }
    const contacts = request.contacts();
    const outcome = this.#registrar.register(
      {
        aor: aor.id,
        wildcard: contacts === 'wildcard',
        contacts: contacts === 'wildcard' ? [] : contacts.map((contact) => ({ uri: formatContactUri(contact.uri), expires: numberParam(contact.params.get('expires')) })),
        expires: request.expires(),
        callId: request.callId() ?? '',
        cseq: request.cseq()?.seq ?? 0,
        userAgent: request.get('user-agent') ?? '',
        source: { transport: tx.source.transport === 'TCP' ? 'tcp' : 'udp', address: tx.source.address, port: tx.source.port },
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
    const headers: Array<[string, string]> = outcome.bindings.map((binding) => ['Contact', `<${binding.uri}>;expires=${Math.max(0, Math.round((binding.expiresAt - now) / 1000))}`]);
    headers.push(['Date', new Date(now).toUTCString()]);
    tx.reply(200, undefined, headers);
  }

  /** Endpoints with at least one binding on one of their AORs are online. */
  #refreshStates(): void {
    // EndpointStateChange through the registry, PeerStatusChange on a change of reachability.
    const qualifier = this.#qualifier;
    this.#objects?.refreshStates(this.#registrar, qualifier ? (aor, uri) => qualifier.state(aor, uri) : undefined);
  }

  /** Qualifies the contacts of AORs with qualify_frequency > 0 (see qualify.ts). */
  #syncQualify(): void {
    if (!this.#objects || !this.#qualifier || !this.#layer) return;
    this.#qualifier.sync(this.#objects.qualifyTargets(this.#registrar));
  }

  async #invite(request: SipRequest, tx: ServerTransaction): Promise<void> {
    const context = this.#context;
    if (!context) return void tx.reply(503);
    const endpoint = this.#identify(request, tx.source);
    if (!this.#authenticate(request, tx, endpoint)) return;
    const callId = request.callId() ?? '';
    if (this.#calls.has(callId)) return void tx.reply(482, 'Loop Detected');
    if (this.#calls.size >= MAX_CALLS) return void tx.reply(503, undefined, [['Retry-After', '5']]);
    const target = request.uri;
    const exten = target.kind === 'sip' && target.user ? target.user : 's';
    const from = request.from();
    const fromUser = from?.uri.kind === 'sip' ? (from.uri.user ?? '') : '';
    const call = new SipCall(this.#services, { kind: 'inbound', invite: request, tx, offer: request.body }, endpoint.codecs, endpoint.id, endpoint);
    this.#wireTransfers(call);
    this.#calls.set(callId, call);
    let prepared;
    try {
      prepared = await call.prepareInbound();
    } catch (error) {
      this.#log?.warn({ err: error }, 'no RTP port for an incoming call');
      this.#calls.delete(callId);
      call.stream?.close();
      return void tx.reply(503, undefined, [['Retry-After', '5']]);
    }
    if (!prepared.ok) {
      this.#calls.delete(callId);
      call.stream?.close();
      return void tx.reply(prepared.status, prepared.reason);
    }
    let channel: Channel;
    try {
      channel = context.channels.create(
        {
          name: `PJSIP/${endpoint.id}-${context.channels.newNameSuffix()}`,
          technology: 'PJSIP',
          endpointResource: endpoint.id,
          direction: 'inbound',
          state: 'Ring',
          caller: { name: from?.displayName ?? '', number: fromUser },
          location: { context: endpoint.context, exten, priority: 1 },
          protocolId: callId,
          ...(endpoint.language ? { language: endpoint.language } : {}),
        },
        (created) => call.attach(created),
      );
    } catch (error) {
      this.#calls.delete(callId);
      call.stream?.close();
      const status = error instanceof UnavailableError ? 503 : 500;
      return void tx.reply(status);
    }
    channel.setSystemVariable('SIPCALLID', callId);
    context.enterDialplan(channel);
  }

  #message(request: SipRequest, tx: ServerTransaction): void {
    const context = this.#context;
    if (!context) return void tx.reply(503);
    const endpoint = this.#identify(request, tx.source);
    if (!this.#authenticate(request, tx, endpoint)) return;
    const contentType = (request.contentType() ?? 'text/plain').toLowerCase();
    if (!contentType.startsWith('text/plain')) return void tx.reply(415, 'Unsupported Media Type', [['Accept', 'text/plain']]);
    const variables: Record<string, string> = Object.create(null) as Record<string, string>;
    let count = 0;
    for (const header of request.headers) {
      if (!/^x-/i.test(header.name) || count >= MAX_MESSAGE_VARIABLES) continue;
      variables[header.name] = header.value;
      count++;
    }
    const from = request.from();
    const to = request.to();
    const message: TextMessage = {
      from: from ? formatAddress(from.displayName, from.uri.kind === 'sip' ? `sip:${from.uri.user ?? ''}@${from.uri.host}` : '') : '',
      to: to && to.uri.kind === 'sip' ? `pjsip:${to.uri.user ?? endpoint.id}` : `pjsip:${endpoint.id}`,
      body: request.body.toString('utf8'),
      variables,
    };
    try {
      context.messages.receive(message, endpoint.id);
    } catch (error) {
      if (error instanceof NotFoundError) return void tx.reply(404);
      throw error;
    }
    // Then the endpoint's message_context, at the request-URI's user, as Asterisk routes messages.
    if (endpoint.messageContext) {
      const exten = request.uri.kind === 'sip' && request.uri.user ? request.uri.user : 's';
      try {
        context.messages.runDialplan(message, { context: endpoint.messageContext, exten });
      } catch (error) {
        if (error instanceof UnavailableError) return void tx.reply(503, undefined, [['Retry-After', '5']]);
        throw error;
      }
    }
    tx.reply(202, 'Accepted');
  }

  // ---- transfers (REFER on a call) ---------------------------------------------------------------

  #wireTransfers(call: SipCall): void {
    call.onRefer = (request, tx) => this.#referOnCall(call, request, tx);
    call.onTransferProgress = (state) => this.#transferProgress(call, state);
  }

  /**
   * A REFER on a call. The application handles the transfer (Asterisk's ari-only transfer
   * handling): ChannelTransfer, 202, NOTIFY 100 Trying. A channel outside Stasis cannot be
   * transferred by Patchbay: 603.
   */
  #referOnCall(call: SipCall, request: SipRequest, tx: ServerTransaction): void {
    const context = this.#context;
    const channel = call.channel;
    if (!context || !channel || channel.hangingUp) return void tx.reply(481, 'Call/Transaction Does Not Exist');
    const referTo = parseReferTo(request);
    if (!referTo) return void tx.reply(400, 'Bad Refer-To');
    const pending = this.#transfers.get(call);
    if (pending && !pending.done) return void tx.reply(491, 'Request Pending');
    if (!channel.stasis) {
      this.#log?.info({ channel: channel.name }, 'REFER on a channel outside Stasis declined: transfers are handled by ARI applications');
      return void tx.reply(603, 'Declined');
    }
    const subscribed = !/^\s*false/i.test(request.get('refer-sub') ?? '');
    const replaced = referTo.replaces ? this.#calls.get(referTo.replaces.callId)?.channel : undefined;
    const transfer = new IncomingTransfer(
      channel,
      {
        destination: referTo.destination,
        ...(referTo.replaces ? { protocolId: referTo.replaces.callId } : {}),
        ...(referTo.replaces
          ? {
              params: [
                ...(referTo.replaces.fromTag !== undefined ? [{ name: 'from', value: referTo.replaces.fromTag }] : []),
                ...(referTo.replaces.toTag !== undefined ? [{ name: 'to', value: referTo.replaces.toTag }] : []),
              ],
            }
          : {}),
        ...(replaced && replaced !== channel ? { destinationChannel: replaced } : {}),
      },
      subscribed,
    );
    this.#transfers.set(call, transfer);
    tx.reply(202, 'Accepted', subscribed ? [] : [['Refer-Sub', 'false']]);
    context.raiseTransfer(channel, transfer.request);
    if (subscribed) this.#notifyTransfer(call, 'channel_progress');
  }

  /** ARI transfer_progress: a NOTIFY with the sipfrag status, and ChannelTransfer with the state. */
  #transferProgress(call: SipCall, state: TransferProgressState): void {
    const transfer = this.#transfers.get(call);
    if (!transfer || transfer.done) return;
    if (SIPFRAG[state].final) transfer.done = true;
    if (transfer.subscribed) this.#notifyTransfer(call, state);
    this.#context?.raiseTransfer(transfer.channel, { ...transfer.request, state });
  }

  #notifyTransfer(call: SipCall, state: TransferProgressState): void {
    const { status, final } = SIPFRAG[state];
    call.requestInDialog(
      'NOTIFY',
      [
        ['Event', 'refer'],
        ['Subscription-State', final ? 'terminated;reason=noresource' : 'active;expires=60'],
        ['Contact', `<sip:patchbay@${formatHostForUri(this.#publicHost)}:${this.#port}>`],
      ],
      `SIP/2.0 ${status}\r\n`,
      'message/sipfrag;version=2.0',
    );
  }

  // ---- outbound ---------------------------------------------------------------------------------

  /** `PJSIP/alice`, `PJSIP/5551234@trunk`, `PJSIP/alice/sip:alice@192.0.2.1:5062`. */
  request(request: ChannelRequest): Channel {
    const context = this.#context;
    if (!context || !this.#layer) throw new UnavailableError('SIP is not running');
    const { endpoint, user, uri } = this.#resolveDial(request.resource);
    const destination = this.#destinationOf(uri);
    if (!destination) throw new UnavailableError(`No reachable contact for endpoint ${endpoint.id}`);
    if (this.#calls.size >= MAX_CALLS) throw new UnavailableError('Too many SIP calls');
    const target: SipUri = user !== undefined ? { ...uri, user } : uri;
    const call = new SipCall(this.#services, { kind: 'outbound', target, destination, fromUser: endpoint.fromUser ?? 'patchbay' }, endpoint.codecs, endpoint.id, endpoint);
    this.#wireTransfers(call);
    const channel = context.channels.create(
      {
        ...(request.channelId ? { id: request.channelId } : {}),
        name: `PJSIP/${endpoint.id}-${context.channels.newNameSuffix()}`,
        technology: 'PJSIP',
        endpointResource: endpoint.id,
        direction: 'outbound',
        state: 'Down',
        protocolId: call.callId,
        ...(request.requestor ? { linkedId: request.requestor.snapshot().id } : {}),
        ...(endpoint.language ? { language: endpoint.language } : {}),
      },
      (created) => call.attach(created),
    );
    this.#calls.set(call.callId, call);
    return channel;
  }

  #resolveDial(resource: string): { endpoint: PjsipEndpoint; user?: string; uri: SipUri } {
    const slash = resource.indexOf('/');
    const head = slash < 0 ? resource : resource.slice(0, slash);
    const explicit = slash < 0 ? undefined : resource.slice(slash + 1);
    const at = head.lastIndexOf('@');
    const endpointId = at < 0 ? head : head.slice(at + 1);
    const user = at < 0 ? undefined : head.slice(0, at);
    if (endpointId === '') throw new InvalidError(`PJSIP dial string needs an endpoint: ${resource}`);
    const endpoint = this.#config.endpoints.get(endpointId);
    if (!endpoint) throw new NotFoundError(`Endpoint not found: PJSIP/${endpointId}`);
    if (explicit) {
      const parsed = parseUri(explicit);
      if (!parsed || parsed.kind !== 'sip') throw new InvalidError(`Not a SIP URI: ${explicit}`);
      return { endpoint, user, uri: parsed };
    }
    const uri = this.#contactOf(endpoint);
    if (!uri) throw new UnavailableError(`No reachable contact for endpoint PJSIP/${endpoint.id}`);
    return { endpoint, user, uri };
  }

  /** The newest registered binding of the endpoint's AORs, else the first static contact. */
  #contactOf(endpoint: PjsipEndpoint): SipUri | undefined {
    // Contacts that qualifying found Unreachable are skipped, as Asterisk skips unavailable ones.
    const unreachable = (aor: string, uri: string): boolean => this.#qualifier?.state(aor, uri)?.status === 'Unreachable';
    let newest: Binding | undefined;
    for (const aorId of endpoint.aors) {
      for (const binding of this.#registrar.lookup(aorId)) {
        if (unreachable(aorId, binding.uri)) continue;
        if (!newest || binding.expiresAt >= newest.expiresAt) newest = binding;
      }
    }
    if (newest) {
      const parsed = parseUri(newest.uri);
      if (parsed && parsed.kind === 'sip') return parsed;
    }
    for (const aorId of endpoint.aors) {
      for (const contact of this.#config.aors.get(aorId)?.contacts ?? []) {
        const text = contact.replace(/^<|>$/g, '');
        if (unreachable(aorId, text)) continue;
        const parsed = parseUri(text);
        if (parsed && parsed.kind === 'sip') return parsed;
      }
    }
    return undefined;
  }

  #destinationOf(uri: SipUri): Destination | undefined {
    return uriDestination(uri);
  }

  /**
   * ARI refer: a REFER out of any call to `pjsip:<endpoint>` (its contact) or
   * `pjsip:<endpoint>/<uri>`, asking it to call `refer_to`: a SIP URI as given, or an endpoint of
   * this server — with `to_self`, this server's URI for that endpoint (the far end calls us),
   * otherwise the endpoint's contact. NotFoundError: no such endpoint (404); InvalidError: a
   * refer_to that is neither (400). Anything later (no contact, a refusal) is a log line, since
   * ARI has answered 202 by then, as in Asterisk.
   */
  #sendRefer(refer: ReferRequest, destination: MessageDestination): void {
    const layer = this.#layer;
    if (!layer) throw new UnavailableError('SIP is not running');
    if (!this.#config.endpoints.has(destination.resource)) throw new NotFoundError('Endpoint not found');
    const referToUri = this.#referTarget(refer.referTo, refer.toSelf);
    let resolved: { endpoint: PjsipEndpoint; uri: SipUri };
    try {
      resolved = this.#resolveDial(destination.address);
    } catch (error) {
      if (error instanceof NotFoundError) throw error;
      this.#log?.info({ to: refer.to, err: error }, 'REFER not sent: no contact for the endpoint');
      return;
    }
    const target = this.#destinationOf(resolved.uri);
    if (!target) {
      this.#log?.info({ to: refer.to }, 'REFER not sent: the contact has no host');
      return;
    }
    const uri = resolved.uri;
    const fromUser = refer.from.replace(/^.*sips?:/, '').replace(/@.*$/, '').replace(/[^A-Za-z0-9._+-]/g, '') || 'patchbay';
    const displayName = Object.entries(refer.variables).find(([name]) => name.toLowerCase() === 'display_name')?.[1];
    const callId = newCallId();
    const host = formatHostForUri(this.#publicHost);
    const request = new SipRequest('REFER', uri, [
      ['Max-Forwards', '70'],
      ['From', `<sip:${fromUser}@${host}>;tag=${newTag()}`],
      ['To', `<${formatContactUri(uri)}>`],
      ['Call-ID', callId],
      ['CSeq', '1 REFER'],
      ['Contact', `<sip:${fromUser}@${host}:${this.#port}${target.transport === 'TCP' ? ';transport=tcp' : ''}>`],
      ['Refer-To', displayName ? `${quoteDisplayName(displayName)} <${referToUri}>` : `<${referToUri}>`],
      ['Event', 'refer'],
      ['User-Agent', USER_AGENT],
    ]);
    let count = 0;
    for (const [name, value] of Object.entries(refer.variables)) {
      if (name.toLowerCase() === 'display_name' || REFER_BLOCKED_HEADERS.has(name.toLowerCase())) continue;
      if (count >= MAX_MESSAGE_VARIABLES || !/^[A-Za-z0-9-]{1,64}$/.test(name) || /[\r\n]/.test(value) || value.length > 1024) continue;
      request.set(name, value);
      count++;
    }
    this.#referSubscriptions.add(callId);
    layer.sendRequest(request, target, {
      onResponse: (response) => {
        if (response.status < 300) return;
        this.#referSubscriptions.forget(callId);
        this.#log?.info({ status: response.status, to: refer.to }, 'SIP REFER refused');
      },
      onTimeout: () => {
        this.#referSubscriptions.forget(callId);
        this.#log?.info({ to: refer.to }, 'SIP REFER timed out');
      },
    });
  }

  /** refer_to as a URI: a sip:/sips: URI as given, else an endpoint (`pjsip:alice`, `alice`). */
  #referTarget(referTo: string, toSelf: boolean): string {
    const text = referTo.trim().replace(/^<|>$/g, '');
    if (/^sips?:/i.test(text)) {
      const parsed = parseUri(text);
      if (!parsed || parsed.kind !== 'sip' || /[\r\n<>]/.test(text)) throw new InvalidError(`refer_to is not a valid SIP URI: ${referTo}`);
      return formatContactUri(parsed);
    }
    const name = text.replace(/^pjsip:/i, '').split('/')[0] ?? '';
    const endpoint = this.#config.endpoints.get(name);
    if (!endpoint) throw new InvalidError(`refer_to is neither a SIP URI nor an endpoint: ${referTo}`);
    if (toSelf) return `sip:${encodeURIComponent(endpoint.id)}@${formatHostForUri(this.#publicHost)}:${this.#port}`;
    const contact = this.#contactOf(endpoint);
    if (!contact) throw new InvalidError(`refer_to endpoint ${endpoint.id} has no contact`);
    return formatContactUri(contact);
  }

  /**
   * A message to `pjsip:<endpoint>` goes to the endpoint's contact as a SIP MESSAGE. An endpoint
   * without a reachable contact (not registered, or known only to the endpoint list) gets it as
   * before SIP existed: TextMessageReceived for the applications subscribed to it.
   */
  #sendMessage(message: TextMessage, destination: MessageDestination): void {
    const layer = this.#layer;
    let resolved: { endpoint: PjsipEndpoint; uri: SipUri } | undefined;
    try {
      resolved = layer ? this.#resolveDial(destination.resource) : undefined;
    } catch {
      resolved = undefined;
    }
    const target = resolved ? this.#destinationOf(resolved.uri) : undefined;
    if (!layer || !resolved || !target) {
      this.#context?.messages.receive(message, destination.resource);
      return;
    }
    const { uri } = resolved;
    const fromUser = message.from.replace(/^.*sip:/, '').replace(/@.*$/, '').replace(/[^A-Za-z0-9._+-]/g, '') || 'patchbay';
    const request = new SipRequest('MESSAGE', uri, [
      ['Max-Forwards', '70'],
      ['From', `<sip:${fromUser}@${this.#publicHost}>;tag=${newTag()}`],
      ['To', `<sip:${uri.user ? `${uri.user}@` : ''}${uri.host}>`],
      ['Call-ID', newCallId()],
      ['CSeq', '1 MESSAGE'],
      ['User-Agent', USER_AGENT],
    ]);
    let count = 0;
    for (const [name, value] of Object.entries(message.variables)) {
      if (count >= MAX_MESSAGE_VARIABLES || !/^[A-Za-z0-9-]{1,64}$/.test(name) || /[\r\n]/.test(value)) continue;
      request.add(name.toLowerCase().startsWith('x-') ? name : `X-${name}`, value);
      count++;
    }
    request.body = Buffer.from(message.body, 'utf8');
    request.set('Content-Type', 'text/plain');
    layer.sendRequest(request, target, {
      onResponse: (response) => {
        if (response.status >= 300) this.#log?.info({ status: response.status, to: message.to }, 'SIP MESSAGE refused');
      },
      onTimeout: () => this.#log?.info({ to: message.to }, 'SIP MESSAGE timed out'),
    });
  }
}

function quoteDisplayName(name: string): string {
  // eslint-disable-next-line no-control-regex
  return `"${name.replace(/[\x00-\x1f\x7f]/g, '').replace(/(["\\])/g, '\\$1').slice(0, 128)}"`;
}

function numberParam(value: string | null | undefined): number | undefined {
  if (value === undefined || value === null || !/^\d{1,10}$/.test(value)) return undefined;
  return Number(value);
}

function formatContactUri(uri: import('../../sip/uri.ts').Uri): string {
  if (uri.kind !== 'sip') return `${uri.scheme}:${uri.opaque}`;
  const host = uri.host.includes(':') && !uri.host.startsWith('[') ? `[${uri.host}]` : uri.host;
  const params = [...uri.params].map(([name, value]) => (value === null ? `;${name}` : `;${name}=${value}`)).join('');
  return `${uri.scheme}:${uri.user ? `${uri.user}@` : ''}${host}${uri.port ? `:${uri.port}` : ''}${params}`;
}

function formatHostForUri(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function formatAddress(displayName: string | undefined, uri: string): string {
  return displayName ? `"${displayName}" <${uri}>` : `<${uri}>`;
}
