// Assembles a running Patchbay: the core, the ARI dispatcher, the HTTP server and the event WebSocket.
import { loadIndicationsConf } from './core/indications-conf.ts';
import type { PjsipTechnology } from './channels/pjsip/technology.ts';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig, type PatchbayConfig } from './config/config.ts';
import { Core, type CoreOptions } from './control/core.ts';
import type { ChannelTechnology } from './core/channels/technology.ts';
import { createChannelTechnologies } from './channels/index.ts';
import { readPjsipConfObjects } from './channels/pjsip/objects.ts';
import { reloadPjsipConf } from './channels/pjsip/conf-reload.ts';
import { EndedLadders } from './channels/pjsip/ended-ladders.ts';
import { LadderStore } from './channels/pjsip/ladder-store.ts';
import { pjsipConfigTypes } from './channels/pjsip/config/store-types.ts';
import type { ConfigObjectTree } from './core/dynamic-config/file-backend.ts';
import type { AudioSocketTechnology } from './channels/external-media/audiosocket.ts';
import type { UnicastRtpTechnology } from './channels/external-media/unicast-rtp.ts';
import type { WebSocketTechnology } from './channels/websocket/technology.ts';
import { LogChannels } from './core/log-channels.ts';
import { createLogger, rotateLogFile, setLogLevel, type Logger } from './log.ts';
import { Authenticator } from './ari/auth.ts';
import { ConsoleFiles } from './console/static.ts';
import { ConsoleReaper } from './console/reaper.ts';
import { Dispatcher } from './ari/dispatcher.ts';
import { EventsWebSocket } from './ari/events-ws.ts';
import { OutboundWebSockets } from './ari/outbound-ws/manager.ts';
import type { HandlerTable } from './ari/handler.ts';
import { HANDLER_TABLES } from './ari/handlers/index.ts';
import { AriHttpServer } from './ari/http-server.ts';
import { HANDLER_SOURCE, SERVED_RESOURCES } from './ari/resources.ts';
import { ariResourceModuleName } from './core/builtin-modules.ts';
import { isLoopback } from './config/value-checks.ts';
import { Health } from './ops/health.ts';
import { changedSettings, classifyChanges } from './config/reload.ts';
import { Metrics } from './ops/metrics.ts';
import { AdminRoutes } from './ops/admin.ts';
import { MetricsHistory } from './ops/metrics-history.ts';
import { CallQuality } from './core/call-quality.ts';
import type { Cluster } from './cluster/cluster.ts';

/**
 * The core with the built-in channel technologies of src/channels/ (and any others given after
 * them), keeping handles on the external media ones for tests and tools.
 */
export class PatchbayCore extends Core {
  /** UnicastRTP channels (ARI externalMedia rtp/udp) and their RTP sockets. */
  readonly externalMedia: UnicastRtpTechnology;
  /** AudioSocket channels (ARI externalMedia audiosocket/tcp) and their TCP connections. */
  readonly audioSocket: AudioSocketTechnology;
  /** PJSIP (alias SIP) channels, the SIP transports and the registrar. */
  readonly pjsip: PjsipTechnology;
  /** WebSocket channels (chan_websocket, ARI externalMedia over websocket) and their connections. */
  readonly webSocket: WebSocketTechnology;

  constructor(options: Omit<CoreOptions, 'technologies'> & { readonly technologies?: readonly ChannelTechnology[] }) {
    const builtin = createChannelTechnologies();
    const fileObjects = pjsipConfObjects(options.config, options.log);
    super({
      ...options,
      technologies: [...builtin.list, ...(options.technologies ?? [])],
      configTypes: [...pjsipConfigTypes(), ...(options.configTypes ?? [])],
      fileConfigObjects: fileObjects,
    });
    this.externalMedia = builtin.rtp;
    this.audioSocket = builtin.audioSocket;
    this.pjsip = builtin.pjsip;
    this.webSocket = builtin.webSocket;
    // chan_pjsip.so's reload reads pjsip.conf again (the file is named by this configuration).
    let running = fileObjects ?? {};
    const file = options.config.sip.pjsipConf;
    const log = options.log;
    this.pjsip.reloadConfig = () => {
      if (!file) return log.info('chan_pjsip.so reloaded: no pjsip.conf is configured (sip.pjsip_conf)');
      running = reloadPjsipConf(file, running, (tree) => this.replaceFileConfigObjects(tree), log).tree;
    };
  }
}

/**
 * The objects of `sip.pjsip_conf`, for the dynamic configuration (read-only, beneath the YAML's):
 * the endpoint list and the SIP technology both read them there. Its errors and warnings are logged.
 */
function pjsipConfObjects(config: PatchbayConfig, log: Logger): ConfigObjectTree | undefined {
  const file = config.sip.pjsipConf;
  if (!file) return undefined;
  const read = readPjsipConfObjects(file);
  if (read.fatal.length > 0) throw new ConfigError('sip.pjsip_conf', `${read.fatal[0]}${read.fatal.length > 1 ? ` (and ${read.fatal.length - 1} more)` : ''}; an identify or acl that cannot be read stops start-up`);
  for (const line of read.errors) log.error(line);
  for (const line of read.warnings) log.warn(line);
  return read.tree;
}

export interface RunningServer {
  readonly core: PatchbayCore;
  readonly log: Logger;
  readonly address: AddressInfo;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  stop(): Promise<void>;
  /**
   * Applies a reloaded configuration: the settings in LIVE_SETTINGS change now; the returned
   * `atRestart` lists the changed settings that take effect at the next start.
   */
  applyConfig(next: PatchbayConfig): { live: string[]; atRestart: string[] };
  /**
   * Graceful stop (Asterisk's `core stop gracefully`): while draining, every new channel is refused
   * (ARI 503, SIP 503) and /health answers 503 "draining"; `onIdle` runs once no channel is left.
   * `drain(false)` takes calls again (`core abort shutdown`).
   */
  drain(on: boolean, onIdle?: () => void): void;
  /** The cluster membership when `cluster.nats_url` is set (docs/cluster.md). */
  readonly cluster?: Cluster;
  /** What the event WebSockets' send queues hold now (bench): connections, messages, bytes. */
  eventQueues(): { connections: number; messages: number; bytes: number };
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
  /** Channel technologies to run beside the built-in ones (started after them). */
  readonly technologies?: readonly ChannelTechnology[];
  /**
   * Reads the configuration again when reloadable parts of it are reloaded (ARI outbound
   * WebSockets). Default: the file the configuration came from, with the environment.
   */
  readonly readConfig?: () => PatchbayConfig;
}

export async function startServer(config: PatchbayConfig, options: StartOptions = {}): Promise<RunningServer> {
  // The log goes to one output (see createLogger); a console log channel added through ARI writes to stderr.
  const logChannels = new LogChannels({ logsDir: config.dirs.logs, consoleSink: process.stderr, maxChannels: config.logging.maxLogChannels });
  const log = createLogger(config, { destination: options.logDestination, alsoTo: logChannels.createPinoDestination() });
  // What asterisk_config_dir holds that Patchbay does not understand: one line each, never silently.
  for (const line of config.warnings) log.warn(line);
  // The tone zones in force (indications.conf from asterisk_config_dir, else the built-in ones).
  for (const line of loadIndicationsConf(config.origin.asteriskDir)) log.warn(line);
  const core = new PatchbayCore({ config, log, logChannels, technologies: options.technologies });
  await core.start();
  // A cluster member's (set once the server listens) and the graceful-stop state it announces.
  let cluster: Cluster | undefined;
  let draining = false;
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
    onRequest: (operation, method, status, seconds) => metrics.observeRequest(operation, method, status, seconds),
    currentUser: (name) => authenticator.userNamed(name),
  });
  // ARI outbound WebSockets: the server connects to the applications (persistent and per call).
  const outbound = new OutboundWebSockets({
    core,
    log,
    rest: events,
    developerMode,
    maxPayloadBytes: config.http.bodyLimitBytes + 64 * 1024,
    readConfig: options.readConfig ?? (config.configFile !== null ? () => loadConfig({ path: config.configFile }) : () => config),
  });
  await outbound.start(config);
  const metrics = new Metrics({
    core,
    events: () => ({
      clients: events.clientCount,
      eventsSent: events.eventsSent + outbound.eventsSent,
      eventsDropped: events.eventsDropped + outbound.eventsDropped,
    }),
    sip: () => core.pjsip.stats(),
    sipListening: () => core.pjsip.unavailableReason === undefined,
    ...(config.cluster.natsUrl !== '' ? { cluster: () => (cluster ? { members: cluster.memberCount, natsConnected: cluster.natsConnected, load: cluster.memberLoads() } : undefined) } : {}),
  });
  core.media.clock.onLateness = (seconds) => metrics.observeTickLateness(seconds);
  core.pjsip.onCallRoundTrip = (seconds) => metrics.observeSipRoundTrip(seconds);
  const health = new Health(core, () => {
    const sip = core.pjsip.unavailableReason;
    const reasons = sip === undefined ? [] : [sip];
    return cluster ? [...reasons, ...cluster.degradations()] : reasons;
  });
  // The operator console's figures: SIP ladders (the trace's tap), call quality, sampled metrics.
  core.pjsip.sipLadder.configure({
    messagesPerDialog: config.console.sipLadderMessages,
    dialogs: config.console.sipLadderDialogs,
    maxCallRate: config.console.sipLadderMaxCallRate,
  });
  const unbindLadder = core.channels.onLifecycle('created', (channel) => {
    // A SIP channel tells its Call-ID and, inbound, the INVITE's From tag (CHANNEL(pjsip,…)): its
    // dialog's ladder is named after the channel. An outbound channel has no remote tag when made.
    const callId = channel.technology === 'PJSIP' ? channel.driver.channelInfo?.('call-id') : undefined;
    if (callId) core.pjsip.sipLadder.bind({ callId, remoteTag: channel.driver.channelInfo?.('remote_tag') ?? '' }, channel);
  });
  // Ended calls' ladders, kept in the database for History (bounded by console.sip_ladder_stored_*).
  const ladderStore = new LadderStore({ calls: config.console.sipLadderStoredCalls, bytes: config.console.sipLadderStoredBytes }, (err) =>
    log.warn({ err }, 'the SIP ladder store failed; ladders stay in memory only'),
  );
  ladderStore.attach(core.database);
  const endedLadders = new EndedLadders({ ladder: core.pjsip.sipLadder, store: ladderStore, channels: core.channels });
  const callQuality = new CallQuality({ channels: core.channels, onEnded: (figures) => core.records.quality.add(figures) });
  const metricsHistory = new MetricsHistory({ channels: core.channels, eventsSent: () => events.eventsSent + outbound.eventsSent });
  const stopConsoleSources = (): void => {
    unbindLadder();
    endedLadders.stop();
    ladderStore.detach();
    callQuality.stop();
    metricsHistory.stop();
  };
  const admin = new AdminRoutes({
    cluster: () => cluster?.status(),
    clusterChannels: async () => cluster?.channelPlaces(),
    console: { ladder: core.pjsip.sipLadder, storedLadders: ladderStore, quality: callQuality, history: metricsHistory },
    core,
    pjsip: core.pjsip,
    configuredLevel: () => current.logging.level,
    currentLevel: () => log.level,
    setLogLevel: (level) => setLogLevel(log, level),
    rotateLogs: async () => {
      const files = logChannels.list().filter((channel) => channel.type === 'File').map((channel) => channel.channel);
      for (const name of files) await logChannels.rotate(name);
      const own = await rotateLogFile(log);
      return own === undefined ? files : [...files, own];
    },
  });
  const requireAuth = config.metrics.requireAuth;
  const ops = {
    metricsRequireAuth: requireAuth === 'auto' ? !isLoopback(config.http.bind) : requireAuth || !isLoopback(config.http.bind),
    metrics: async () => ({ contentType: metrics.contentType, text: await metrics.render() }),
    health: () => health.check(),
    observeRequest: (operation: string | undefined, method: string, status: number, seconds: number) => metrics.observeRequest(operation, method, status, seconds),
    admin: (method: string, pathname: string, query: URLSearchParams) => admin.handle(method, pathname, query),
  };
  const authenticator = new Authenticator(config.ari.users, { failedLogins: config.ari.failedLogins, namedAcls: config.ari.acls, cryptChecksPerSecond: config.ari.cryptChecksPerSecond, equaliseFailures: true });
  const http = new AriHttpServer({ config, log, dispatcher, authenticator, upgrade: events, ops, media: core.webSocket, sipWebSocket: core.pjsip, console: config.http.console ? ConsoleFiles.load(log) : undefined });
  let address: AddressInfo;
  try {
    address = await http.listen(config.http.port, config.http.bind);
    core.pjsip.webSocketListening(address.port);
  } catch (err) {
    stopConsoleSources();
    outbound.close();
    await core.stop();
    await authenticator.close();
    await logChannels.close();
    throw err;
  }
  // What a dead browser's console left (its listen-ins) goes once the console is clearly gone.
  const consoleReaper = config.http.console
    ? new ConsoleReaper(core, { onReaped: (app, channels, bridges) => log.info({ app, channels, bridges }, 'web console gone: its listen-in channels and bridges were removed') })
    : undefined;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  // A cluster member (cluster.nats_url): NATS is loaded only then, and requests for resources of
  // other members are forwarded from here on.
  if (config.cluster.natsUrl !== '') {
    try {
      const { Cluster: ClusterMember } = await import('./cluster/cluster.ts');
      cluster = await ClusterMember.start({
        config,
        core,
        log,
        ari: { dispatch: (request) => dispatcher.dispatch(request), userNamed: (name) => authenticator.userNamed(name) },
        ariUrl: `http://${host}:${address.port}`,
        draining: () => draining,
      });
      dispatcher.forwarder = cluster.forwarder;
      // Before the directory: the contacts it shares carry this member's address on each phone's connection.
      core.pjsip.flowRelay = cluster.sipFlows;
      core.pjsip.contactDirectory = cluster.contacts;
      const member = cluster;
      events.beforeAccept = (apps) => member.prepareApplications(apps);
    } catch (err) {
      consoleReaper?.close();
      stopConsoleSources();
      events.close();
      outbound.close();
      await http.close();
      await core.stop();
      await authenticator.close();
      await logChannels.close();
      throw err;
    }
  }
  let stopping: Promise<void> | undefined;
  let current = config;
  // `patchbay reload` (module reload cdr / cel): the call records take the settings read again; a
  // file that does not load is reported and the running settings stay, as a SIGHUP keeps them.
  const readRecordsConfig = options.readConfig ?? (config.configFile !== null ? () => loadConfig({ path: config.configFile }) : () => current);
  core.reloadCallRecords = async () => {
    let next: PatchbayConfig;
    try {
      next = readRecordsConfig();
    } catch (err) {
      log.error({ err }, 'reloading the call records settings failed, the running ones stay');
      return;
    }
    await core.records.reconfigure(next);
  };
  let idleWatch: (() => void) | undefined;
  return {
    core,
    log,
    address,
    cluster,
    url: `http://${host}:${address.port}`,
    eventQueues: () => events.queued(),
    stop() {
      stopping ??= (async () => {
        health.markStopping();
        consoleReaper?.close();
        stopConsoleSources();
        events.close();
        outbound.close();
        await http.close();
        core.pjsip.contactDirectory = undefined;
        core.pjsip.flowRelay = undefined;
        await cluster?.stop();
        await core.stop();
        await authenticator.close();
        // Last: lines logged while stopping are written before stop() resolves.
        await logChannels.close();
      })();
      return stopping;
    },
    applyConfig(next) {
      const changes = classifyChanges(changedSettings(current, next));
      if (changes.live.some((key) => key.startsWith('ari.users') || key.startsWith('ari.acls'))) {
        authenticator.replaceUsers(next.ari.users, next.ari.acls);
        events.usersReplaced(next.ari.users);
      }
      if (changes.live.includes('logging.level')) setLogLevel(log, next.logging.level);
      // cdr.conf and cel.conf (or their YAML): the records of calls in progress and those queued are kept.
      if (changes.live.some((key) => /^(cdr|cel)\./.test(key))) {
        core.records.reconfigure(next).then(
          () => log.info({ settings: changes.live.filter((key) => /^(cdr|cel)\./.test(key)) }, 'call records reconfigured'),
          (err: unknown) => log.error({ err }, 'reconfiguring the call records failed'),
        );
      }
      // Outbound WebSockets follow their entries and the rights of their local_ari_user.
      if (changes.live.some((key) => /^(ari\.users|ari\.outbound_websockets|websocket_clients)\b/.test(key))) outbound.apply(next);
      current = next;
      return changes;
    },
    drain(on, onIdle) {
      idleWatch?.();
      idleWatch = undefined;
      draining = on;
      core.channels.refuseNew(on ? 'the server is shutting down gracefully' : undefined);
      health.markDraining(on);
      // The other members stop placing work here at once, not at the next heartbeat.
      cluster?.announce();
      if (!on || !onIdle) return;
      let fired = false;
      const check = (force = false): void => {
        if (fired || (core.channels.size > 0 && !force)) return;
        if (force) log.warn({ channels: core.channels.size, seconds: config.cluster.drainTimeoutSeconds }, 'graceful stop: cluster.drain_timeout_seconds passed, stopping with calls up');
        fired = true;
        idleWatch?.();
        idleWatch = undefined;
        onIdle();
      };
      const lifecycle = core.channels.onLifecycle('destroyed', () => queueMicrotask(check));
      // A cluster member may be told to leave after a bounded drain (its calls are then ended).
      const limit = cluster ? config.cluster.drainTimeoutSeconds : 0;
      const timer = limit > 0 ? setTimeout(() => check(true), limit * 1000) : undefined;
      timer?.unref();
      idleWatch = () => {
        lifecycle();
        clearTimeout(timer);
      };
      check();
    },
  };
}
