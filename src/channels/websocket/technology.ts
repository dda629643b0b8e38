// Media over WebSocket (`WebSocket`, chan_websocket.so): channels whose far end is an application
// on a WebSocket, dialled as `WebSocket/<INCOMING|client name>[/<options>]` (dial-string.ts) from
// Dial(), ARI originate/create or ARI externalMedia with transport websocket.
//
// - INCOMING (server mode): the channel gets MEDIA_WEBSOCKET_CONNECTION_ID, a fresh secret id of
//   192 random bits, and the application connects to ws://<http>/media/<id> with the credentials
//   of an ARI user who may write (checked by the HTTP server; read-only users never see the id).
//   Unlike Asterisk, the id is single-use (one upgrade
//   may claim it, ever), dies with the channel, and the channel hangs up when nothing connects
//   within `chan_websocket.connect_timeout_seconds` of its call starting. Unknown id → 404, an id claimed before
//   → 409, a subprotocol list without `media` or a malformed handshake → 400 (the id stays unspent).
// - A websocket_clients name (client mode): the call connects to that server (core/
//   websocket-clients/), with v() parameters on its URI; when it cannot, the channel hangs up
//   with cause 3.
// Once connected, MEDIA_START goes out and the channel answers (unless `n`); session.ts carries
// the media and the control protocol.
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Channel } from '../../core/channels/channel.ts';
import type { ChannelRequest, ChannelTechnology, TechnologyContext } from '../../core/channels/technology.ts';
import { InvalidError, NotFoundError, UnavailableError } from '../../core/errors.ts';
import { WebSocketClients } from '../../util/websocket-clients/index.ts';
import { getCodec, KNOWN_CODEC_NAMES } from '../../media/codecs.ts';
import { parseDialString } from './dial-string.ts';
import { MAX_MESSAGE_BYTES, WebSocketSession } from './media-session.ts';

export const MEDIA_PROTOCOL = 'media';
const CONNECTION_ID = /^[A-Za-z0-9_-]{1,128}$/;
const DEFAULT_FORMAT = 'ulaw';

export class WebSocketTechnology implements ChannelTechnology {
  readonly name = 'WebSocket';
  readonly description = 'Websocket Media Channel Driver';
  readonly module = { name: 'chan_websocket.so', description: 'Websocket Media Channel Driver' };
  #context: TechnologyContext | undefined;
  #clients = new WebSocketClients([]);
  /** INCOMING sessions by their secret id, for as long as their channel lives. */
  readonly #incoming = new Map<string, WebSocketSession>();
  readonly #sessions = new Set<WebSocketSession>();
  readonly #server: WebSocketServer;

  constructor() {
    this.#server = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_MESSAGE_BYTES,
      perMessageDeflate: false,
      // Called only when the client offers protocols; `media` is the one spoken here.
      handleProtocols: (offered) => (offered.has(MEDIA_PROTOCOL) ? MEDIA_PROTOCOL : false),
    });
  }

  /** Sessions alive (connected or waiting). */
  get size(): number {
    return this.#sessions.size;
  }

  session(channel: Channel): WebSocketSession | undefined {
    for (const session of this.#sessions) if (session.channel === channel) return session;
    return undefined;
  }

  /** The websocket_clients this technology dials (ARI externalMedia checks names against it). */
  get clients(): WebSocketClients {
    return this.#clients;
  }

  start(context: TechnologyContext): void {
    this.#context = context;
    this.#clients = new WebSocketClients(context.config.websocketClients);
  }

  stop(): void {
    this.#context = undefined;
    for (const session of [...this.#sessions]) session.close();
    this.#incoming.clear();
  }

  request(request: ChannelRequest): Channel {
    const context = this.#context;
    if (!context) throw new UnavailableError('The WebSocket channel driver is not running');
    const dial = parseDialString(request.resource);
    const client = dial.incoming ? undefined : this.#clients.get(dial.connection);
    if (!dial.incoming && !client) throw new NotFoundError(`No websocket_client named '${dial.connection}'`);
    const formatName = dial.format ?? request.formats?.[0] ?? DEFAULT_FORMAT;
    const codec = getCodec(formatName);
    if (!codec) {
      const known = (KNOWN_CODEC_NAMES as readonly string[]).includes(formatName);
      throw new InvalidError(known ? `Format '${formatName}' cannot be carried by WebSocket channels here (ulaw, alaw, slin, slin16)` : `Unknown format '${formatName}'`);
    }
    if (dial.badControlFormat) context.log.warn({ resource: request.resource }, "WebSocket f() takes plain-text or json; using plain-text");
    const connectionId = dial.incoming ? crypto.randomBytes(24).toString('base64url') : dial.connection;
    // chan_websocket prints its instance's address (`%p`); this, the technology's own count in that form.
    const suffix = context.channels.newNameSuffix('WebSocket');
    let session: WebSocketSession | undefined;
    const channel = context.channels.create(
      {
        id: request.channelId,
        name: `WebSocket/${dial.connection}/0x${suffix}`,
        technology: this.name,
        direction: 'outbound',
        state: 'Down',
        linkedId: request.requestor?.linkedId,
        language: request.requestor?.language,
      },
      (created) =>
        (session = new WebSocketSession({
          channel: created,
          dial,
          codec,
          connectionId,
          controlFormat: dial.controlFormat ?? context.config.chanWebsocket.controlMessageFormat,
          media: context.media,
          log: context.log,
          client,
          connectTimeoutMs: context.config.chanWebsocket.connectTimeoutSeconds * 1000,
          onClose: (closed) => this.#forget(closed),
        })),
    );
    const created = session!;
    this.#sessions.add(created);
    if (dial.incoming) this.#incoming.set(connectionId, created);
    // However the channel goes (even without asking its driver), the connection goes with it.
    channel.once('hangup', () => created.close());
    channel.setSystemVariable('MEDIA_WEBSOCKET_CONNECTION_ID', connectionId);
    channel.setSystemVariable('MEDIA_WEBSOCKET_OPTIMAL_FRAME_SIZE', String(created.optimalFrameSize));
    return channel;
  }

  /**
   * An upgrade request for /media/<id> (the HTTP server routes it here before any ARI
   * authentication). Answers on the socket whatever happens; never throws.
   */
  handleMediaUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, connectionId: string): void {
    const session = CONNECTION_ID.test(connectionId) ? this.#incoming.get(connectionId) : undefined;
    if (!this.#context || !session || session.closed) return refuse(socket, 404, 'Not Found', 'WebSocket instance not found');
    if (request.method !== 'GET') return refuse(socket, 501, 'Not Implemented', 'Method not implemented');
    const offered = request.headers['sec-websocket-protocol'];
    if (offered !== undefined && !offered.split(',').some((name) => name.trim() === MEDIA_PROTOCOL)) {
      return refuse(socket, 400, 'Bad Request', `WebSocket subprotocol must include "${MEDIA_PROTOCOL}"`);
    }
    // The handshake is checked before the id is spent: a request the WebSocket server would refuse
    // (another Upgrade, no valid key, an unknown version) must not use up the single-use id.
    const handshakeProblem = badHandshake(request);
    if (handshakeProblem) return refuse(socket, 400, 'Bad Request', handshakeProblem);
    if (!session.claim()) return refuse(socket, 409, 'Conflict', 'Another websocket connection exists for this connection id');
    this.#server.handleUpgrade(request, socket, head, (ws) => session.attach(ws));
  }

  #forget(session: WebSocketSession): void {
    this.#sessions.delete(session);
    if (this.#incoming.get(session.connectionId) === session) this.#incoming.delete(session.connectionId);
  }
}

/** What the WebSocket server would refuse in an upgrade request (RFC 6455 4.2.1), if anything. */
function badHandshake(request: IncomingMessage): string | undefined {
  if (request.headers.upgrade?.trim().toLowerCase() !== 'websocket') return 'Upgrade must be websocket';
  const key = request.headers['sec-websocket-key']?.trim();
  if (!key || !/^[+/0-9A-Za-z]{22}==$/.test(key)) return 'Sec-WebSocket-Key is missing or invalid';
  const version = request.headers['sec-websocket-version']?.trim();
  if (version !== '13' && version !== '8') return 'Sec-WebSocket-Version must be 13';
  // ws refuses a protocol list with an empty or repeated name.
  const offered = request.headers['sec-websocket-protocol'];
  if (offered !== undefined) {
    const names = offered.split(',').map((name) => name.trim());
    if (names.some((name) => !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) || new Set(names).size !== names.length) return 'Sec-WebSocket-Protocol is malformed';
  }
  return undefined;
}

function refuse(socket: Duplex, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ message });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}
