// Calling a phone registered over TCP, TLS or WebSocket through another member (docs/cluster.md,
// "Registrations"): the phone's connection lives on the member that took its REGISTER (the
// holder, A), so a member dialling it (B) sends the dialog's messages through A. B's transaction
// layer writes on a RelayedFlow (a ForeignFlow): each message is a NATS request to A, which
// checks it and writes it on the phone's connection, remembering the dialog (Call-ID) as B's;
// what the phone sends on that connection with that Call-ID A hands to B, which takes it as
// received over the flow. RTP does not pass here: it goes between B and the phone directly.
//
// Bounds: a relayed message is at most the SIP stack's maximum and must parse; only a live member
// may lend a connection, and only one that is open for a contact registered here (never a new
// connection: a phone behind NAT could not take it); at most `cluster.max_relayed_dialogs` dialogs
// per member on each side. Entries go when B's call ends (release), when the phone's connection
// closes (B's dialog gets the transport failure), and when either member leaves or dies.
import { randomUUID } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { SharedContact } from '../channels/pjsip/contact-directory.ts';
import type { FlowHost, FlowRelay } from '../channels/pjsip/flow-relay.ts';
import type { ForeignFlow } from '../sip/foreign-flow.ts';
import type { SipMessage } from '../sip/message.ts';
import { parseMessage } from '../sip/parser.ts';
import type { Binding } from '../sip/registrar.ts';
import type { Destination, Source, TcpConnection } from '../sip/transport.ts';
import { parseUri } from '../sip/uri.ts';
import { decodeFlowMessage, decodeFlowReply, encodeFlow, flowData, MAX_RELAYED_MESSAGE, sipFlowSubject, type FlowDeliver, type FlowMessage, type FlowReply, type FlowSend } from './sip-flow-wire.ts';

export interface SipFlowsOptions {
  readonly nc: NatsConnection;
  readonly prefix: string;
  readonly node: string;
  /** Whether a node is a live member other than this one. */
  readonly isLiveMember: (node: string) => boolean;
  /** Relayed dialogs at most, per other member (as holder) and in all (as dialling member); 0: none. */
  readonly maxDialogs: number;
  readonly requestTimeoutMs: number;
  readonly log: Logger;
}

/** After B releases a dialog, the holder still relays it this long: a last response (the BYE's 200) on its way. */
const RELEASE_LINGER_MS = 5_000;
/** The transports a flow runs over (a UDP contact needs none: it is called directly). */
const FLOW_PROTOCOLS: Readonly<Record<Exclude<SharedContact['transport'], 'udp'>, RelayedFlow['protocol']>> = { tcp: 'TCP', tls: 'TLS', ws: 'WS', wss: 'WSS' };

/** On the holder: a dialog of another member over one of this member's connections. */
interface Lent {
  readonly member: string;
  readonly flow: string;
  readonly callId: string;
  readonly destination: Destination & { connection: TcpConnection };
  linger?: NodeJS.Timeout;
}

/** On the dialling member: the holder's connection to the phone, as this member's SIP stack sees it. */
class RelayedFlow implements ForeignFlow {
  private static next = 1;
  readonly foreign = true;
  /** Ids of their own, far from the stream transports' small ones (informative: logs). */
  readonly id = 1_000_000_000 + RelayedFlow.next++;
  readonly key = randomUUID();
  readonly localAddress: string;
  readonly localPort: number;
  closed = false;
  /** The dialog's Call-ID, from the first message written: what comes back must carry it. */
  callId: string | undefined;

  constructor(
    private readonly relay: ClusterSipFlows,
    readonly holder: string,
    readonly contact: string,
    readonly protocol: 'TCP' | 'TLS' | 'WS' | 'WSS',
    readonly remoteAddress: string,
    readonly remotePort: number,
    readonly advertised: { readonly host: string; readonly port: number },
  ) {
    this.localAddress = advertised.host;
    this.localPort = advertised.port;
  }

  write(message: SipMessage): Promise<void> {
    return this.relay.write(this, message);
  }

  release(): void {
    this.relay.release(this);
  }
}

export class ClusterSipFlows implements FlowRelay {
  /** Messages written through another member, and handed to another member, since start (status, tests). */
  relayedOut = 0;
  relayedIn = 0;
  readonly #options: SipFlowsOptions;
  #host: FlowHost | undefined;
  #subscription: Subscription | undefined;
  /** Holder side: by `<member>/<flow>`, and by Call-ID (what the phone sends is matched by it). */
  readonly #lent = new Map<string, Lent>();
  readonly #lentByCallId = new Map<string, Lent>();
  readonly #lentPerMember = new Map<string, number>();
  /** Dialling side: the flows of this member's calls, by key. */
  readonly #flows = new Map<string, RelayedFlow>();

  constructor(options: SipFlowsOptions) {
    this.#options = options;
  }

  start(): void {
    const { nc, prefix, node } = this.#options;
    this.#subscription = nc.subscribe(sipFlowSubject(prefix, node), { callback: (error, msg) => void (error ? undefined : this.#onMessage(msg)) });
  }

  stop(): void {
    this.#subscription?.unsubscribe();
    for (const lent of this.#lent.values()) clearTimeout(lent.linger);
    this.#lent.clear();
    this.#lentByCallId.clear();
    this.#lentPerMember.clear();
    for (const flow of [...this.#flows.values()]) this.#closeFlow(flow, 'this cluster member stops');
  }

  /** Dialogs this member relays for others (holder) and runs through others (dialling). */
  get counts(): { lent: number; flows: number } {
    return { lent: this.#lent.size, flows: this.#flows.size };
  }

  attach(host: FlowHost): void {
    this.#host = host;
  }

  /** The address to share beside a binding over a connection (contacts.ts): where the phone sees this member. */
  advertisedFor(binding: Binding): { host: string; port: number } | undefined {
    return this.#options.maxDialogs > 0 ? this.#host?.advertisedFor(binding.source) : undefined;
  }

  // ---- the dialling side

  flowTo(contact: SharedContact): { readonly flow: ForeignFlow } | { readonly refused: string } {
    const { maxDialogs, isLiveMember } = this.#options;
    if (maxDialogs === 0) return { refused: 'relaying is off here (cluster.max_relayed_dialogs is 0)' };
    if (!contact.flow || contact.transport === 'udp') return { refused: 'the holder shares no flow for it' };
    if (!isLiveMember(contact.holder)) return { refused: `${contact.holder} is not a live cluster member` };
    if (this.#flows.size >= maxDialogs) return { refused: `too many calls through other members (cluster.max_relayed_dialogs ${maxDialogs})` };
    const uri = parseUri(contact.uri);
    if (!uri || uri.kind !== 'sip') return { refused: 'the contact is not a SIP URI' };
    const protocol = FLOW_PROTOCOLS[contact.transport];
    const flow = new RelayedFlow(this, contact.holder, contact.uri, protocol, uri.host.replace(/^\[|\]$/g, ''), uri.port ?? (protocol === 'TLS' ? 5061 : 5060), contact.flow);
    this.#flows.set(flow.key, flow);
    return { flow };
  }

  /** A message of this member's dialog, to be written on the holder's connection; rejects with why it was not. */
  async write(flow: RelayedFlow, message: SipMessage): Promise<void> {
    if (flow.closed) throw new Error('connection closed');
    const data = message.serialize();
    if (data.length > MAX_RELAYED_MESSAGE) throw new Error('message too large to send');
    flow.callId ??= message.callId();
    const send: FlowSend = { op: 'send', from: this.#options.node, flow: flow.key, contact: flow.contact, data: data.toString('base64') };
    let reply: FlowReply;
    try {
      const answer = await this.#options.nc.request(sipFlowSubject(this.#options.prefix, flow.holder), encodeFlow(send), { timeout: this.#options.requestTimeoutMs });
      reply = decodeFlowReply(answer.data);
    } catch (err) {
      reply = { status: 504, reason: `cluster member ${flow.holder} did not answer (${err instanceof Error ? err.message : String(err)})` };
    }
    if (reply.status !== 200) throw new Error(`through cluster member ${flow.holder}: ${reply.status} ${reply.reason ?? ''}`.trim());
    this.relayedOut++;
  }

  /** The call over the flow ended: forgotten here, and the holder told. */
  release(flow: RelayedFlow): void {
    if (this.#flows.get(flow.key) !== flow) return;
    this.#flows.delete(flow.key);
    flow.closed = true;
    if (this.#options.isLiveMember(flow.holder)) this.#publish(flow.holder, { op: 'release', from: this.#options.node, flow: flow.key });
  }

  #closeFlow(flow: RelayedFlow, why: string): void {
    if (flow.closed) return;
    flow.closed = true;
    this.#flows.delete(flow.key);
    this.#options.log.info({ holder: flow.holder, contact: flow.contact, why }, 'cluster: the connection of a call through another member closed; the call fails as over a closed connection');
    this.#host?.flowClosed(flow);
  }

  #delivered(message: FlowDeliver): void {
    const flow = this.#flows.get(message.flow);
    // Only the holder of the flow speaks for it; anything else (a stale flow, another member) is dropped.
    if (!flow || flow.holder !== message.from || !this.#host) return;
    const data = flowData(message);
    const parsed = data ? parseMessage(data) : undefined;
    if (!parsed?.ok || parsed.message.callId() !== flow.callId) {
      this.#options.log.debug({ holder: flow.holder }, 'cluster: a relayed SIP message was malformed or of another dialog; dropped');
      return;
    }
    this.relayedIn++;
    const source: Source = { transport: flow.protocol, address: message.address, port: message.port, connection: flow };
    this.#host.receive(parsed.message, source);
  }

  // ---- the holder's side

  divert(message: SipMessage, source: Source): boolean {
    if (this.#lentByCallId.size === 0) return false;
    const callId = message.callId();
    const lent = callId === undefined ? undefined : this.#lentByCallId.get(callId);
    // The Call-ID is the dialling member's (random): on the very connection it was lent, it is its dialog.
    if (!lent || lent.destination.connection !== source.connection) return false;
    this.#publish(lent.member, { op: 'deliver', from: this.#options.node, flow: lent.flow, data: message.serialize().toString('base64'), address: source.address, port: source.port });
    return true;
  }

  connectionClosed(connection: TcpConnection): void {
    if (this.#lent.size === 0) return;
    for (const lent of [...this.#lent.values()]) {
      if (lent.destination.connection !== connection) continue;
      this.#forget(lent);
      if (this.#options.isLiveMember(lent.member)) this.#publish(lent.member, { op: 'closed', from: this.#options.node, flow: lent.flow, reason: 'the phone\'s connection closed' });
    }
  }

  async #lend(send: FlowSend): Promise<FlowReply> {
    const { node, isLiveMember, maxDialogs } = this.#options;
    if (send.from === node || !isLiveMember(send.from)) return { status: 403, reason: `${send.from} is not a live cluster member` };
    const host = this.#host;
    if (!host) return { status: 503, reason: 'SIP is not running here' };
    const data = flowData(send);
    const parsed = data ? parseMessage(data) : undefined;
    if (!parsed?.ok) return { status: 400, reason: parsed ? `not a SIP message (${parsed.reason})` : 'bad data' };
    const message = parsed.message;
    const callId = message.callId();
    if (callId === undefined) return { status: 400, reason: 'no Call-ID' };
    const key = `${send.from}/${send.flow}`;
    let lent = this.#lent.get(key);
    if (lent && lent.callId !== callId) return { status: 400, reason: 'another dialog on this flow' };
    if (!lent) {
      if ((this.#lentPerMember.get(send.from) ?? 0) >= maxDialogs) return { status: 503, reason: `too many dialogs relayed for ${send.from} (cluster.max_relayed_dialogs ${maxDialogs})` };
      if (this.#lentByCallId.has(callId)) return { status: 409, reason: 'a dialog with this Call-ID is relayed already' };
      const destination = host.connectionOf(send.contact);
      if (!destination) return { status: 404, reason: `no open connection of ${send.contact.slice(0, 128)} here` };
      lent = { member: send.from, flow: send.flow, callId, destination };
      this.#lent.set(key, lent);
      this.#lentByCallId.set(callId, lent);
      this.#lentPerMember.set(send.from, (this.#lentPerMember.get(send.from) ?? 0) + 1);
    }
    if (lent.destination.connection.closed) {
      this.#forget(lent);
      return { status: 404, reason: 'the phone\'s connection closed' };
    }
    try {
      await host.send(message, lent.destination);
    } catch (err) {
      return { status: 502, reason: `not written: ${err instanceof Error ? err.message : String(err)}` };
    }
    return { status: 200 };
  }

  #released(member: string, flow: string): void {
    const lent = this.#lent.get(`${member}/${flow}`);
    if (!lent || lent.linger) return;
    lent.linger = setTimeout(() => this.#forget(lent), RELEASE_LINGER_MS);
    lent.linger.unref();
  }

  #forget(lent: Lent): void {
    const key = `${lent.member}/${lent.flow}`;
    if (this.#lent.get(key) !== lent) return;
    clearTimeout(lent.linger);
    this.#lent.delete(key);
    if (this.#lentByCallId.get(lent.callId) === lent) this.#lentByCallId.delete(lent.callId);
    const left = (this.#lentPerMember.get(lent.member) ?? 1) - 1;
    if (left <= 0) this.#lentPerMember.delete(lent.member);
    else this.#lentPerMember.set(lent.member, left);
  }

  // ---- both

  /** A member left or died: the dialogs lent to it are forgotten, and the calls through it fail. */
  memberDown(member: string): number {
    let ended = 0;
    for (const lent of [...this.#lent.values()]) if (lent.member === member) this.#forget(lent);
    for (const flow of [...this.#flows.values()]) {
      if (flow.holder !== member) continue;
      ended++;
      this.#closeFlow(flow, `cluster member ${member} is gone`);
    }
    return ended;
  }

  #publish(member: string, message: FlowMessage): void {
    try {
      this.#options.nc.publish(sipFlowSubject(this.#options.prefix, member), encodeFlow(message));
    } catch (err) {
      this.#options.log.warn({ err, member }, 'cluster: a relayed SIP message could not be published');
    }
  }

  async #onMessage(msg: Msg): Promise<void> {
    const message = decodeFlowMessage(msg.data);
    if (typeof message === 'string') {
      if (msg.reply) msg.respond(encodeFlow({ status: 400, reason: message }));
      return;
    }
    switch (message.op) {
      case 'send': {
        const reply = await this.#lend(message);
        if (msg.reply) msg.respond(encodeFlow(reply));
        return;
      }
      case 'release':
        this.#released(message.from, message.flow);
        return;
      case 'deliver':
        this.#delivered(message);
        return;
      case 'closed': {
        const flow = this.#flows.get(message.flow);
        if (flow && flow.holder === message.from) this.#closeFlow(flow, message.reason);
        return;
      }
    }
  }
}
