// A WebSocket server playing the ARI application that Patchbay's outbound WebSockets connect to:
// it records each upgrade request, can refuse upgrades, and queues each connection's messages.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export type Message = Record<string, unknown> & { type: string };

export class AppConnection {
  readonly messages: Message[] = [];
  private waiters: ((message: Message) => void)[] = [];
  /** Resolves with the close code once the socket closes. */
  readonly closed: Promise<number>;

  constructor(
    readonly socket: WebSocket,
    readonly request: http.IncomingMessage,
  ) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as Message;
      const waiter = this.waiters.shift();
      if (waiter) waiter(message);
      else this.messages.push(message);
    });
    this.closed = new Promise((resolve) => socket.on('close', (code) => resolve(code)));
  }

  next(timeoutMs = 15_000): Promise<Message> {
    const queued = this.messages.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error('no message in time'));
      }, timeoutMs);
      const waiter = (message: Message): void => {
        clearTimeout(timer);
        resolve(message);
      };
      this.waiters.push(waiter);
    });
  }

  /** Messages until one satisfies `done` (included). */
  async until(done: (message: Message) => boolean, timeoutMs = 15_000): Promise<Message[]> {
    const deadline = Date.now() + timeoutMs;
    const seen: Message[] = [];
    for (;;) {
      const remaining = deadline - Date.now();
      let message: Message;
      try {
        message = await this.next(Math.max(remaining, 1));
      } catch {
        throw new Error(`timed out; saw ${seen.map((m) => m.type).join(', ')}`);
      }
      seen.push(message);
      if (done(message)) return seen;
    }
  }

  /** Sends a RESTRequest and waits for the RESTResponse with its request_id. */
  async rest(method: string, uri: string, extra: Record<string, unknown> = {}): Promise<Message> {
    const requestId = `r-${Math.random().toString(36).slice(2)}`;
    this.socket.send(JSON.stringify({ type: 'RESTRequest', transaction_id: 't1', request_id: requestId, method, uri, ...extra }));
    const seen = await this.until((m) => m.type === 'RESTResponse' && m.request_id === requestId);
    // Events that came meanwhile stay for next()/until().
    this.messages.unshift(...seen.slice(0, -1));
    return seen[seen.length - 1]!;
  }
}

export class AppServer {
  readonly connections: AppConnection[] = [];
  /** Upgrade attempts seen, refused ones included. */
  attempts = 0;
  /** While true, upgrades are answered 503. */
  refuse = false;
  private waiters: ((connection: AppConnection) => void)[] = [];

  private constructor(
    private readonly server: http.Server | https.Server,
    private readonly wss: WebSocketServer,
  ) {}

  static async start(options: { tls?: { key: Buffer | string; cert: Buffer | string }; protocol?: string | false; autoPong?: boolean } = {}): Promise<AppServer> {
    const server = options.tls ? https.createServer(options.tls) : http.createServer();
    const wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      autoPong: options.autoPong ?? true,
      handleProtocols: (offered) => (options.protocol === false ? false : offered.has(options.protocol ?? 'ari') ? (options.protocol ?? 'ari') : false),
    });
    const app = new AppServer(server, wss);
    server.on('upgrade', (request, socket, head) => {
      app.attempts++;
      if (app.refuse) {
        socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        return;
      }
      wss.handleUpgrade(request, socket, head, (ws) => {
        const connection = new AppConnection(ws, request);
        const waiter = app.waiters.shift();
        app.connections.push(connection);
        waiter?.(connection);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return app;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The next connection (or one already made and not yet taken with this method). */
  private taken = 0;
  nextConnection(timeoutMs = 15_000): Promise<AppConnection> {
    if (this.taken < this.connections.length) return Promise.resolve(this.connections[this.taken++]!);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no connection in time')), timeoutMs);
      this.waiters.push((connection) => {
        clearTimeout(timer);
        this.taken++;
        resolve(connection);
      });
    });
  }

  async stop(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
