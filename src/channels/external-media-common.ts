// What the external media technologies (ARI `externalMedia`) share, whatever carries the audio:
// the request and its parameters, where the far end is and where to reach it from, the receive
// queue that re-frames whatever the far end sends into one 20 ms frame per media clock tick, the
// rate conversion of frames on their way out, the table of live sessions, and the entry of a new
// channel into its Stasis application. RTP over UDP is in external-media.ts, AudioSocket over TCP
// in audiosocket.ts.
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type { Applications } from '../core/applications.ts';
import { CAUSE } from '../core/channels/causes.ts';
import type { Channel } from '../core/channels/channel.ts';
import type { Channels } from '../core/channels/channels.ts';
import { applyVariables, splitAppArgs, type VariableAssignment } from '../core/channels/originate.ts';
import { InvalidError } from '../core/errors.ts';
import type { MediaEngine } from '../core/media-engine.ts';
import type { Stasis } from '../core/stasis.ts';
import { samplesPerFrame, type Frame, type SampleRate } from '../media/frame.ts';
import { createResampler, type Resampler } from '../media/resample.ts';

export type ExternalMediaFormat = 'ulaw' | 'alaw' | 'slin' | 'slin16';
export type ExternalMediaDirection = 'both' | 'in' | 'out';

export const EXTERNAL_MEDIA_FORMATS: readonly ExternalMediaFormat[] = ['ulaw', 'alaw', 'slin', 'slin16'];

export function isExternalMediaFormat(name: string): name is ExternalMediaFormat {
  return (EXTERNAL_MEDIA_FORMATS as readonly string[]).includes(name);
}

export interface ExternalMediaRequest {
  readonly app: string;
  readonly appArgs?: string;
  /** `host:port` of the media server. */
  readonly externalHost: string;
  readonly format: ExternalMediaFormat;
  readonly direction: ExternalMediaDirection;
  readonly channelId?: string;
  readonly variables?: readonly VariableAssignment[];
}

export interface ExternalMediaLog {
  warn(details: Record<string, unknown>, message: string): void;
  debug(details: Record<string, unknown>, message: string): void;
}

export interface ExternalMediaOptions {
  readonly channels: Channels;
  readonly stasis: Stasis;
  readonly applications: Applications;
  readonly media: MediaEngine;
  /** The address the ARI interface listens on (`http.bind`); media sockets bind on its class. */
  readonly httpBind: string;
  readonly log?: ExternalMediaLog;
}

// ---- addresses -----------------------------------------------------------------------------------

/** `host:port` or `[v6]:port`, port 1–65535; undefined when malformed. */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:[\]\s/]+):(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  const host = match[1];
  if (text.startsWith('[') && net.isIPv6(host) === false) return undefined;
  return { host, port };
}

export const isLoopbackAddress = (address: string): boolean =>
  address === '::1' || address.startsWith('127.') || address.toLowerCase().startsWith('::ffff:127.');

export const isWildcardAddress = (address: string): boolean => address === '0.0.0.0' || address === '::';

async function resolveRemote(host: string): Promise<{ address: string; family: 4 | 6 }> {
  const literal = net.isIP(host);
  if (literal) return { address: host, family: literal as 4 | 6 };
  try {
    const found = await lookup(host);
    return { address: found.address, family: found.family === 6 ? 6 : 4 };
  } catch {
    throw new InvalidError(`external_host: cannot resolve ${host}`);
  }
}

/** Where a socket binds: the class of http.bind (loopback, wildcard or that address) in the remote's family. */
async function bindAddressFor(httpBind: string, family: 4 | 6): Promise<string> {
  const bind = httpBind.trim();
  if (bind === '' || bind === 'localhost' || isLoopbackAddress(bind)) return family === 4 ? '127.0.0.1' : '::1';
  if (isWildcardAddress(bind)) return family === 4 ? '0.0.0.0' : '::';
  let address = bind;
  if (!net.isIP(bind)) {
    try {
      address = (await lookup(bind, { family })).address;
    } catch {
      throw new InvalidError(`external_host: no IPv${family} address to send from (http.bind is ${httpBind})`);
    }
  }
  if (net.isIP(address) !== family) throw new InvalidError(`external_host: an IPv${family} host cannot be reached from ${httpBind} (http.bind)`);
  return address;
}

export interface ExternalTarget {
  /** The remote's address (resolved) and port. */
  readonly address: string;
  readonly port: number;
  readonly family: 4 | 6;
  /** The local address to bind; a wildcard when the interface listens everywhere. */
  readonly bindAddress: string;
}

/**
 * Resolves `host:port` and chooses the local address to reach it from. InvalidError for a
 * malformed or unresolvable host, or one the bind address cannot reach (a loopback-bound server
 * talks to loopback hosts only); `what` names the media in that message ("RTP is sent").
 */
export async function resolveTarget(externalHost: string, httpBind: string, what: string): Promise<ExternalTarget> {
  const target = parseHostPort(externalHost);
  if (!target) throw new InvalidError('external_host must be <host>:<port>');
  const remote = await resolveRemote(target.host);
  const bindAddress = await bindAddressFor(httpBind, remote.family);
  if (isLoopbackAddress(bindAddress) && !isLoopbackAddress(remote.address)) {
    throw new InvalidError(`external_host ${externalHost} cannot be reached: ${what} from the loopback address, as the interface listens on ${httpBind} (http.bind)`);
  }
  return { address: remote.address, port: target.port, family: remote.family, bindAddress };
}

// ---- media ---------------------------------------------------------------------------------------

/** The most audio waiting to be delivered. */
const MAX_QUEUED_FRAMES = 50;
/** A queue that stays at least this deep for DRIFT_WINDOW_TICKS loses one frame. */
const DRIFT_MIN_FRAMES = 3;
const DRIFT_WINDOW_TICKS = 250;

/**
 * Audio received from the far end, whatever the size of its packets or messages, delivered one
 * 20 ms frame per media clock tick. The queue holds at most a second (the oldest audio goes
 * first); a queue that never drains below three frames for five seconds (a sender whose clock
 * runs fast) loses a frame so latency does not creep up.
 */
export class ReceiveQueue {
  readonly frameSamples: number;
  private readonly queue: Int16Array;
  private read = 0;
  private length = 0;
  private scratchBuffer = new Int16Array(0);
  private readonly frame: Frame;
  private minDepthFrames = Number.POSITIVE_INFINITY;
  private ticksInWindow = 0;

  constructor(rate: SampleRate) {
    this.frameSamples = samplesPerFrame(rate);
    this.queue = new Int16Array(this.frameSamples * MAX_QUEUED_FRAMES);
    this.frame = { rate, samples: new Int16Array(this.frameSamples) };
  }

  /** Samples waiting. */
  get queued(): number {
    return this.length;
  }

  /** A buffer of at least `count` samples to decode into before push(); reused on the next call. */
  scratch(count: number): Int16Array {
    if (this.scratchBuffer.length < count) this.scratchBuffer = new Int16Array(count);
    return this.scratchBuffer;
  }

  /** Queues decoded samples (copied). */
  push(samples: Int16Array): void {
    const count = samples.length;
    if (count === 0) return;
    const capacity = this.queue.length;
    // Only the newest `capacity` samples can be kept; older queued audio makes room.
    const keep = Math.min(count, capacity);
    const source = samples.subarray(count - keep, count);
    const overflow = this.length + keep - capacity;
    if (overflow > 0) this.discard(overflow);
    const write = (this.read + this.length) % capacity;
    const first = Math.min(keep, capacity - write);
    this.queue.set(source.subarray(0, first), write);
    if (first < keep) this.queue.set(source.subarray(first), 0);
    this.length += keep;
  }

  /**
   * Once per media clock tick: the next frame (owned by the queue, valid until the next call), or
   * undefined when less than a frame waits. Also keeps the latency in check.
   */
  next(): Frame | undefined {
    const size = this.frameSamples;
    let frame: Frame | undefined;
    if (this.length >= size) {
      const capacity = this.queue.length;
      const first = Math.min(size, capacity - this.read);
      const dst = this.frame.samples;
      dst.set(this.queue.subarray(this.read, this.read + first), 0);
      if (first < size) dst.set(this.queue.subarray(0, size - first), first);
      this.read = (this.read + size) % capacity;
      this.length -= size;
      frame = this.frame;
    }
    // Drift: a queue that never ran low during the window holds latency nobody needs.
    const depth = Math.floor(this.length / size);
    if (depth < this.minDepthFrames) this.minDepthFrames = depth;
    if (++this.ticksInWindow >= DRIFT_WINDOW_TICKS) {
      if (this.minDepthFrames >= DRIFT_MIN_FRAMES) this.discard(size);
      this.ticksInWindow = 0;
      this.minDepthFrames = Number.POSITIVE_INFINITY;
    }
    return frame;
  }

  private discard(samples: number): void {
    const dropped = Math.min(samples, this.length);
    this.read = (this.read + dropped) % this.queue.length;
    this.length -= dropped;
  }
}

/** Frames on their way out, brought to the rate the far end takes (one resampler per stream). */
export class OutgoingRate {
  private resampler: Resampler | undefined;
  private readonly out: Int16Array;

  constructor(readonly rate: SampleRate) {
    this.out = new Int16Array(samplesPerFrame(rate));
  }

  /** The frame's samples at `rate`: its own when already at that rate, else a buffer reused on the next call. */
  samples(frame: Frame): Int16Array {
    if (frame.rate === this.rate) return frame.samples;
    if (!this.resampler || this.resampler.fromRate !== frame.rate) this.resampler = createResampler(frame.rate, this.rate);
    const written = this.resampler.process(frame.samples, this.out);
    return written === this.out.length ? this.out : this.out.subarray(0, written);
  }
}

// ---- sessions and channels -----------------------------------------------------------------------

/** One channel's far end. */
export interface ExternalMediaSession {
  readonly channel: Channel;
  close(): void;
}

/** The live sessions of one technology, by channel. */
export class SessionTable<S extends ExternalMediaSession> {
  private readonly byChannel = new Map<string, S>();

  get size(): number {
    return this.byChannel.size;
  }

  get(channel: Channel): S | undefined {
    const session = this.byChannel.get(channel.id);
    return session?.channel === channel ? session : undefined;
  }

  add(session: S): void {
    this.byChannel.set(session.channel.id, session);
  }

  forget(session: S): void {
    if (session.channel && this.byChannel.get(session.channel.id) === session) this.byChannel.delete(session.channel.id);
  }

  closeAll(): void {
    for (const session of [...this.byChannel.values()]) session.close();
  }
}

/**
 * Puts a new external media channel into its application: subscribes the application to it (it
 * sees the set-up, as for originate and create), sets the technology's variables (reported in
 * `channelvars`) and the request's, and enters Stasis. When the application is not active the
 * channel is hung up at once, as a channel originated into an inactive application is.
 */
export function enterApplication(
  options: Pick<ExternalMediaOptions, 'applications' | 'stasis' | 'log'>,
  channel: Channel,
  request: ExternalMediaRequest,
  technologyVariables: Readonly<Record<string, string>>,
): void {
  options.applications.subscribeInternal(request.app, 'channel', channel.id);
  for (const [name, value] of Object.entries(technologyVariables)) channel.setVariable(name, value, true);
  applyVariables(channel, request.variables ?? []);
  channel.setDialplan({ ...channel.location, appName: 'Stasis', appData: request.appArgs ? `${request.app},${request.appArgs}` : request.app });
  if (!options.stasis.enter(channel, request.app, splitAppArgs(request.appArgs))) {
    options.log?.warn({ channel: channel.name, app: request.app }, 'Stasis application is not registered; hanging the external media channel up');
    channel.hangup(CAUSE.normal);
  }
}
