// Shared by the ARI outbound WebSocket suites: a real server started on a configuration file (so
// reloads read it again), the application's WebSocket server, and waiting on what they exchange.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import WebSocket from 'ws';
import { loadConfig, type DeepPartialYaml, type PatchbayConfig } from '../../src/config/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { AppServer, type Message } from '../helpers/app-server.ts';
import { AUTH } from '../helpers/server.ts';

export interface Started {
  readonly server: RunningServer;
  readonly file: string;
  readonly logLines: string[];
  /** Loads the file as the server would on SIGHUP. */
  read(): PatchbayConfig;
  write(yaml: string): void;
  ari(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

/** What a test started, undone by runCleanups() (each test file calls it in `after`). */
export const cleanups: (() => Promise<void> | void)[] = [];

export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** A server on a configuration file (so that reloads read it again). */
export async function startOnFile(yaml: string): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-owc-'));
  const file = join(dir, 'patchbay.yaml');
  writeFileSync(file, yaml);
  const base: DeepPartialYaml = {
    http: { port: 0, bind: '127.0.0.1' },
    dirs: { data: join(dir, 'data') },
    ari: { developer_mode: true },
    logging: { console: false, level: 'debug' },
    sip: { port: 0 },
  };
  const read = () => loadConfig({ path: file, env: {}, overrides: base });
  const logLines: string[] = [];
  const server = await startServer(read(), {
    readConfig: read,
    logDestination: new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    }),
  });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.push(stop);
  return {
    server,
    file,
    logLines,
    read,
    write: (text) => writeFileSync(file, text),
    ari: (path, init = {}) => fetch(`${server.url}/ari${path}`, { ...init, headers: { authorization: AUTH, ...(init.headers ?? {}) } }),
    stop,
  };
}

export async function startApp(options: Parameters<typeof AppServer.start>[0] = {}): Promise<AppServer> {
  const app = await AppServer.start(options);
  cleanups.push(() => app.stop());
  return app;
}

export const bodyOf = (message: Message): unknown => JSON.parse(String(message.message_body));

export async function waitFor(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function unusedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export function watchAll(pb: Started): Promise<AppWatcher> {
  const socket = new WebSocket(`${pb.server.url.replace('http', 'ws')}/ari/events?app=watch&subscribeAll=true`, { headers: { authorization: AUTH } });
  return new Promise((resolve, reject) => {
    const watcher: AppWatcher = { messages: [], socket };
    socket.on('message', (data) => watcher.messages.push(JSON.parse(String(data)) as Message));
    socket.once('open', () => resolve(watcher));
    socket.once('error', reject);
    cleanups.push(() => socket.terminate());
  });
}
export interface AppWatcher {
  readonly messages: Message[];
  readonly socket: WebSocket;
}
