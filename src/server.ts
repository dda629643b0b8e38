// Assembles a running Patchbay: the core, the ARI dispatcher, the HTTP server and the event WebSocket.
import type { AddressInfo } from 'node:net';
import type { PatchbayConfig } from './config/config.ts';
import { Core } from './core/core.ts';
import { LogChannels } from './core/log-channels.ts';
import { createLogger, type Logger } from './log.ts';
import { Authenticator } from './ari/auth.ts';
import { Dispatcher } from './ari/dispatcher.ts';
import { EventsWebSocket } from './ari/events-ws.ts';
import type { HandlerTable } from './ari/handler.ts';
import { HANDLER_TABLES } from './ari/handlers/index.ts';
import { AriHttpServer } from './ari/http-server.ts';
import { HANDLER_SOURCE, SERVED_RESOURCES } from './ari/resources.ts';
import { ariResourceModuleName } from './core/builtin-modules.ts';

export interface RunningServer {
  readonly core: Core;
  readonly log: Logger;
  readonly address: AddressInfo;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  stop(): Promise<void>;
}

export function buildHandlerMap(): Map<string, HandlerTable> {
  // A resource's operations may be handled from several files (channel playback lives with playbacks).
  const byResource = new Map<string, HandlerTable>();
  for (const table of HANDLER_TABLES) {
    const existing = byResource.get(table.resource);
    for (const nickname of Object.keys(table.handlers)) {
      if (existing && nickname in existing.handlers) throw new Error(`two handlers for ${table.resource}.${nickname}`);
    }
    byResource.set(table.resource, { resource: table.resource, handlers: { ...existing?.handlers, ...table.handlers } });
  }
  for (const [alias, source] of Object.entries(HANDLER_SOURCE)) {
    const table = byResource.get(source);
    if (table) byResource.set(alias, table);
  }
  return byResource;
}

export interface StartOptions {
  /** Where the JSON log goes instead of the configured destination (tests capture it). */
  readonly logDestination?: NodeJS.WritableStream;
}

export async function startServer(config: PatchbayConfig, options: StartOptions = {}): Promise<RunningServer> {
  // The console log channel writes readable lines to stderr; stdout carries the JSON log.
  const logChannels = new LogChannels({ logsDir: config.dirs.logs, consoleSink: process.stderr, maxChannels: config.logging.maxLogChannels });
  const log = createLogger(config, { destination: options.logDestination, alsoTo: logChannels.createPinoDestination() });
  const core = new Core({ config, log, logChannels });
  await core.start();
  const developerMode = config.ari.developerMode;
  const dispatcher = new Dispatcher({
    core,
    log,
    resources: SERVED_RESOURCES,
    handlers: buildHandlerMap(),
    developerMode,
    moduleOf: (resource) => ariResourceModuleName(resource === 'system' ? 'asterisk' : resource),
  });
  const events = new EventsWebSocket({
    core,
    log,
    dispatcher,
    developerMode,
    pingIntervalSeconds: config.ari.websocket.pingIntervalSeconds,
    maxQueuedMessages: config.ari.websocket.maxQueuedMessages,
    maxQueuedBytes: config.ari.websocket.maxQueuedBytes,
    maxPayloadBytes: config.http.bodyLimitBytes + 64 * 1024,
  });
  const authenticator = new Authenticator(config.ari.users, { failedLogins: config.ari.failedLogins });
  const http = new AriHttpServer({ config, log, dispatcher, authenticator, upgrade: events });
  let address: AddressInfo;
  try {
    address = await http.listen(config.http.port, config.http.bind);
  } catch (err) {
    await core.stop();
    await authenticator.close();
    await logChannels.close();
    throw err;
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let stopping: Promise<void> | undefined;
  return {
    core,
    log,
    address,
    url: `http://${host}:${address.port}`,
    stop() {
      stopping ??= (async () => {
        events.close();
        await http.close();
        await core.stop();
        await authenticator.close();
        // Last: lines logged while stopping are written before stop() resolves.
        await logChannels.close();
      })();
      return stopping;
    },
  };
}
