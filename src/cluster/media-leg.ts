// One end of a cluster-internal media leg: a channel of no technology table (never listed, never
// announced: its events go nowhere) whose far end is the other member, reached over plain RTP
// (slin16) on a UDP socket from the RTP port range, connected to the other end's socket so the
// kernel drops anyone else's datagrams. On the channel's member the end sits in a hidden
// two-party bridge with the channel; on the bridge's member it stands in for the channel in the
// bridge, with the channel's id and the snapshot its owner sent, so the bridge's events and
// listings show that channel exactly as one server would.
import dgram from 'node:dgram';
import { networkInterfaces } from 'node:os';
import type { Logger } from 'pino';
import type { PatchbayConfig } from '../config/config.ts';
import type { Core } from '../control/core.ts';
import type { Indication } from '../core/channels/technology.ts';
import { Channel, type CallerId, type ChannelEnvironment, type DialplanLocation } from '../core/channels/channel.ts';
import { RtpSession } from '../channels/external-media/unicast-rtp.ts';
import { RtpPayloadCoder } from '../media/rtp/payload.ts';
import { RtpPortRange } from '../media/rtp/port-range.ts';
import type { Model } from '../spec/index.ts';
import { LEG_FORMAT } from './media-leg-wire.ts';

/** The technology name a leg end's channel carries (seen only in logs: the channel is never listed). */
export const LEG_TECHNOLOGY = 'ClusterLeg';

/**
 * The address legs bind and announce: `cluster.media_address`, else the SIP bind address, else
 * the HTTP one; a wildcard becomes the first non-internal IPv4 address (the other member must be
 * able to send to it), loopback when the machine has none.
 */
export function legMediaAddress(config: PatchbayConfig): string {
  const configured = config.cluster.mediaAddress || config.sip.bind || config.http.bind;
  if (configured === 'localhost') return '127.0.0.1';
  if (configured !== '0.0.0.0' && configured !== '::' && configured !== '') return configured;
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((entry) => entry.family === 'IPv4' && !entry.internal);
    if (found) return found.address;
  }
  return '127.0.0.1';
}

/** The RTP ports legs take from: the range SIP calls use (`sip.rtp_port_start`..`rtp_port_end`). */
export function legPortRange(config: PatchbayConfig): RtpPortRange {
  return new RtpPortRange(config.sip.rtpPortStart, Math.max(config.sip.rtpPortStart + 2, config.sip.rtpPortEnd));
}

/** Connects a bound socket to the other end's address: from then on only its datagrams are taken. */
export function connectSocket(socket: dgram.Socket, address: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error): void => reject(error);
    socket.once('error', failed);
    socket.connect(port, address, () => {
      socket.off('error', failed);
      resolve();
    });
  });
}

/**
 * A leg end's RTP session: a digit its bridge passes to it (a DTMF from the other members) goes to
 * `onDigit`, a hold or unhold to `onHold`, which send them to the other end over NATS (the leg's
 * RTP carries audio only).
 */
class LegSession extends RtpSession {
  onDigit: ((digit: string, durationMs: number) => void) | undefined;
  onHold: ((indication: 'hold' | 'unhold') => void) | undefined;

  override sendDigit(digit: string, durationMs: number): void {
    this.onDigit?.(digit, durationMs);
  }

  override indicate(indication?: Indication): void {
    if (indication === 'hold' || indication === 'unhold') this.onHold?.(indication);
  }
}

/**
 * A leg end's channel: its snapshot is the represented channel's, as its owner sent it; a
 * connected-line update its bridge makes (a two-party bridge shows each party the other's caller)
 * goes to `onConnected`, for the represented channel on its own member.
 */
class LegChannel extends Channel {
  #represented: Model<'Channel'> | undefined;
  onConnected: ((connected: CallerId) => void) | undefined;

  get represented(): Model<'Channel'> | undefined {
    return this.#represented;
  }

  /** A newer snapshot of the channel: its caller too, which a two-party bridge gives the other party. */
  set represented(snapshot: Model<'Channel'> | undefined) {
    this.#represented = snapshot;
    const caller = callerOf(snapshot);
    if (caller) this.caller = caller;
  }

  override snapshot(): Model<'Channel'> {
    return this.#represented ?? super.snapshot();
  }

  override setConnected(connected: Partial<CallerId>): void {
    super.setConnected(connected);
    this.onConnected?.({ ...this.connected });
  }

  override stageIdentity(location: DialplanLocation, identity: { readonly caller?: CallerId; readonly connected?: CallerId }): void {
    super.stageIdentity(location, identity);
    if (identity.connected) this.onConnected?.({ ...this.connected });
  }
}

/** Longest caller name or number a snapshot gives a leg end (a bounded copy; ARI's own are shorter). */
const MAX_CALLER_FIELD = 256;

/** The caller id in a represented channel's snapshot, when it is a well-formed one. */
function callerOf(snapshot: Model<'Channel'> | undefined): CallerId | undefined {
  const caller: unknown = snapshot?.caller;
  if (caller === null || typeof caller !== 'object') return undefined;
  const { name, number } = caller as Record<string, unknown>;
  if (typeof name !== 'string' || typeof number !== 'string' || name.length > MAX_CALLER_FIELD || number.length > MAX_CALLER_FIELD) return undefined;
  return { name, number };
}

export interface LegEndOptions {
  readonly core: Core;
  readonly log: Logger;
  /** The channel's id: the represented channel's on the bridge's member, a fresh one on the channel's. */
  readonly id: string;
  readonly name: string;
  /** Bound and connected to the other end. */
  readonly socket: dgram.Socket;
  readonly represented?: Model<'Channel'>;
}

/** A leg end: its channel (put into a bridge by the caller) and its RTP session. */
export class LegEnd {
  readonly channel: LegChannel;
  readonly session: LegSession;
  readonly localPort: number;

  constructor(options: LegEndOptions) {
    const { core, log, socket } = options;
    this.localPort = socket.address().port;
    const environment: ChannelEnvironment = {
      table: core.channels,
      functions: core.channels.functions,
      // Nothing a leg end raises is anyone's business: the represented channel's own events come
      // from its owner, and the bridge raises the membership events with this channel's snapshot.
      publish: () => undefined,
      channelvars: [],
      defaultLanguage: 'en',
      maxVariableBytes: 4096,
      destroyed: () => undefined,
      reportError: (error, channel, during) => log.warn({ err: error, channel: channel.name, during }, 'cluster media leg: a listener failed'),
    };
    let session: LegSession | undefined;
    // The represented channel's caller: the bridge's other party sees it as its connected line.
    const caller = callerOf(options.represented);
    this.channel = new LegChannel(environment, { id: options.id, name: options.name, technology: LEG_TECHNOLOGY, direction: 'outbound', state: 'Up', ...(caller ? { caller } : {}) }, (channel) => {
      const coder = new RtpPayloadCoder(LEG_FORMAT);
      session = new LegSession({ channel, media: core.media, rate: coder.rate, direction: 'both', log, onClose: () => undefined, socket, coder });
      return session;
    });
    this.channel.represented = options.represented;
    this.session = session!;
    this.session.start();
  }

  /** Hangs the end's channel up: it leaves its bridge and its socket closes. */
  close(): void {
    if (!this.channel.hangingUp) this.channel.hangup();
    this.session.close();
  }
}
