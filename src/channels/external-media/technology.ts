// The skeleton of the external media technologies (ARI `externalMedia`): check the request,
// resolve the far end, open the transport, create the channel (Up) with its session as driver,
// and put it into its application with the technology's variables. A transport fills in how a
// connection is opened and what session carries it.
import type { Channel } from '../../core/channels/channel.ts';
import type {
  ChannelTechnology,
  ExternalMediaRequest,
  ExternalMediaSupport,
  TechnologyContext,
  TechnologyModule,
} from '../../core/channels/technology.ts';
import { InvalidError } from '../../core/errors.ts';
import { isCodecName } from '../../media/codecs.ts';
import { parseHostPort, resolveTarget, type ExternalTarget } from './address.ts';
import { SessionTable, type MediaSession } from './external-session.ts';

/** What names an external media technology and which requests it takes. */
export interface ExternalMediaKind {
  readonly name: string;
  readonly description: string;
  readonly module: TechnologyModule;
  /** The request's `encapsulation` and `transport` it serves. */
  readonly encapsulation: string;
  readonly transport: string;
  /** How the message of a host the bind address cannot reach says what is done ("RTP is sent"). */
  readonly reaching: string;
}

export abstract class ExternalMediaTechnology<T, S extends MediaSession> implements ChannelTechnology {
  readonly name: string;
  readonly description: string;
  readonly module: TechnologyModule;
  readonly externalMedia: ExternalMediaSupport;
  readonly #reaching: string;
  readonly #sessions = new SessionTable<S>();
  /** Transports being opened (an open adds its own and removes it once settled): stop() releases them too, failing their open. */
  protected readonly opening = new Set<T>();
  #context: TechnologyContext | undefined;

  constructor(kind: ExternalMediaKind) {
    this.name = kind.name;
    this.description = kind.description;
    this.module = kind.module;
    this.#reaching = kind.reaching;
    this.externalMedia = { encapsulation: kind.encapsulation, transport: kind.transport, create: (request) => this.create(request) };
  }

  /** Sessions with an open transport. */
  get size(): number {
    return this.#sessions.size;
  }

  session(channel: Channel): S | undefined {
    return this.#sessions.get(channel);
  }

  start(context: TechnologyContext): void {
    this.#context = context;
  }

  /** Every transport closes (channels hanging up have closed theirs already), and those being opened. */
  stop(): void {
    this.#context = undefined;
    this.#sessions.closeAll();
    for (const transport of this.opening) this.disposeTransport(transport);
    this.opening.clear();
  }

  /** Checks what the transport needs of the request beyond host and format (InvalidError). */
  protected checkRequest(_request: ExternalMediaRequest): void {}
  /** Opens the transport to the far end; InvalidError when it cannot be had. */
  protected abstract openTransport(target: ExternalTarget, context: TechnologyContext): Promise<T>;
  /** Releases a transport that no session took (or one still being opened, at stop). */
  protected abstract disposeTransport(transport: T): void;
  protected abstract channelName(request: ExternalMediaRequest, context: TechnologyContext): string;
  protected abstract createSession(channel: Channel, transport: T, request: ExternalMediaRequest, context: TechnologyContext, onClose: (session: MediaSession) => void): S;
  /** The variables the channel carries about its transport (reported in `channelvars`). */
  protected abstract variables(session: S): Record<string, string>;

  /**
   * Opens the transport, creates the channel (Up), sets the technology's variables and the
   * request's, and puts it into the application (StasisStart). InvalidError for a bad host or
   * format, ConflictError for a channel id in use. When the application is not active the channel
   * is hung up at once, as a channel originated into an inactive application is.
   */
  protected async create(request: ExternalMediaRequest): Promise<Channel> {
    let context = this.#running();
    if (!parseHostPort(request.externalHost)) throw new InvalidError('external_host must be <host>:<port>');
    if (!isCodecName(request.format)) throw new InvalidError(`Unsupported format: ${String(request.format)}`);
    this.checkRequest(request);
    context.channels.checkId(request.channelId);

    const target = await resolveTarget(request.externalHost, context.config.http.bind, this.#reaching);
    const transport = await this.openTransport(target, context);
    if (this.#context !== context) {
      this.disposeTransport(transport);
      throw new InvalidError('The server is shutting down');
    }
    context = this.#context;

    let session: S | undefined;
    let channel: Channel;
    try {
      // The id may have been taken while the transport was opening.
      channel = context.channels.create(
        { id: request.channelId || undefined, name: this.channelName(request, context), technology: this.name, direction: 'outbound', state: 'Up' },
        (created) => (session = this.createSession(created, transport, request, context, (closed) => this.#sessions.forget(closed))),
      );
    } catch (error) {
      this.disposeTransport(transport);
      throw error;
    }
    session!.start();
    this.#sessions.add(session!);
    context.enterApplication(channel, request.app, { args: request.appArgs, technologyVariables: this.variables(session!), variables: request.variables });
    return channel;
  }

  #running(): TechnologyContext {
    if (!this.#context) throw new InvalidError('The server is shutting down');
    return this.#context;
  }
}
