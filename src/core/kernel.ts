// The telephony kernel: owns every subsystem of the core and knows nothing of HTTP, of the dialplan
// executor or of any channel technology. What it needs of the dialplan (running it on a channel,
// its functions, checking it) it declares as abstract members that the composition above it
// (src/control/core.ts) implements; technologies are handed over and reach it only through their
// context (channels/technology.ts).
import { automaticChannelLimit } from '../util/resource-limits.ts';
import type { Logger } from 'pino';
import type { PatchbayConfig } from '../config/config.ts';
import { Applications } from './applications.ts';
import { MODULE_NAMES, registerBuiltinModules } from './builtin-modules.ts';
import { databasePath, openDatabase, type SqliteDatabase } from './database.ts';
import { EventLog } from './event-log.ts';
import { registerConfigTypes, registerFileOnlyTypes } from './dynamic-config/builtin-types.ts';
import type { ConfigTypeRegistration } from './dynamic-config/types.ts';
import { diffConfigObjects, FileBackend, mergeConfigObjects, type ConfigObjectTree } from './dynamic-config/file-backend.ts';
import { SqliteBackend } from './dynamic-config/sqlite-backend.ts';
import { DynamicConfig } from './dynamic-config/store.ts';
import { DeviceStates } from './device-states.ts';
import { DerivedDeviceStates } from './derived-device-states.ts';
import { AstDb } from './astdb.ts';
import { ExtensionStates } from './extension-states.ts';
import { Endpoints } from './endpoints.ts';
import { MessageRouter } from './messages.ts';
import { GlobalVariables } from './global-vars.ts';
import { LogChannels } from './log-channels.ts';
import { Mailboxes } from './mailboxes.ts';
import { ModuleRegistry } from './modules.ts';
import { ObjectDirectory } from './objects.ts';
import { Channels } from './channels/channels.ts';
import { Technologies } from './channels/technology-registry.ts';
import { CallPickup } from './call-pickup.ts';
import { loadFeaturesConf } from './features-conf.ts';
import { BridgeFeatures } from './bridge-features.ts';
import type { ChannelTechnology, TechnologyApplication, TechnologyFunction } from './channels/technology.ts';
import type { TechnologyDialplan } from './channels/technology-registry.ts';
import type { TextMessage } from './messages.ts';
import type { VariableAssignment } from './variable-limits.ts';
import type { Channel, ChannelFunctions } from './channels/channel.ts';
import { Dialplan } from '../dialplan/dialplan.ts';
import type { ParsedDialplan } from '../dialplan/parsed.ts';
import { indexDialplan, readDialplan, setDialplanGlobals } from './kernel-dialplan.ts';
import { Stasis } from './stasis.ts';
import { ChannelBroadcasts } from './broadcasts.ts';
import { Bridges } from './bridges/bridges.ts';
import { ensureBuiltinSounds, generatedSoundsDir } from './builtin-sounds.ts';
import { ChannelGenerators } from './channel-generators.ts';
import { IndicationTones } from './indication-tones.ts';
import { MediaEngine } from './media-engine.ts';
import { Recordings } from './recordings/recordings.ts';
import { MusicOnHold } from './moh.ts';
import { TalkDetection } from './talk-detect.ts';
import { Playbacks } from './playback/playbacks.ts';
import { Sounds } from './sounds.ts';
import { CallRecords } from './cdr/call-records.ts';
import { loadIndicationsConf } from './indications-conf.ts';
import { RecordingOrigins } from './recordings/recording-origins.ts';
import { loadParkingConf } from './parking/parking-conf.ts';
import { ParkingLots } from './parking/parking-lots.ts';
import { RuntimeExtensions } from './runtime-extensions.ts';

/** How many ended channels HANGUPCAUSE() remembers. */
const MAX_RECENT_HANGUPS = 1024;

export interface CoreOptions {
  readonly config: PatchbayConfig;
  readonly log: Logger;
  /**
   * The log channels the logger writes to. The logger exists before the core, so the caller that
   * builds it creates these first and hands them over; without them the core makes its own.
   */
  readonly logChannels?: LogChannels;
  /** Tests drive the media clock by hand. */
  readonly manualClock?: boolean;
  /**
   * The channel technologies, each a module started in this order (src/channels/index.ts lists
   * the built-in ones; the server hands them over). Without them the core has no technology.
   */
  readonly technologies?: readonly ChannelTechnology[];
  /**
   * Read-only configuration objects from other files than the YAML (Asterisk configuration files
   * read by the server), beneath the YAML `config_objects`: an object the YAML also defines is the YAML's.
   */
  readonly fileConfigObjects?: ConfigObjectTree;
  /**
   * Dynamic configuration types the technologies declare (their attributes, defaults, checks),
   * registered before the file's objects load so that those are read as these types.
   */
  readonly configTypes?: readonly ConfigTypeRegistration[];
}

/** What the composition adds to the kernel's options: the dialplan functions its channels carry. */
export interface KernelOptions extends CoreOptions {
  readonly functions: ChannelFunctions;
}

export abstract class Kernel {
  readonly config: PatchbayConfig;
  readonly log: Logger;
  /** Entity id reported as `asterisk_id` and `system.entity_id`. */
  readonly serverId: string;
  readonly startedAt = new Date();
  lastReloadAt = new Date();
  readonly modules = new ModuleRegistry();
  readonly logChannels: LogChannels;
  readonly dynamicConfig = new DynamicConfig();
  /** The objects read from configuration files (beneath the YAML's), as last loaded. */
  #fileConfigObjects: ConfigObjectTree = {};
  readonly globalVars = new GlobalVariables();
  readonly objects = new ObjectDirectory();
  /** Stasis applications and the event router. */
  readonly applications = new Applications((kind, id) => this.objects.exists(kind, id));
  /** Numbers and keeps the events applications receive, for clients that resume. */
  readonly eventLog: EventLog;
  readonly deviceStates = new DeviceStates(this.applications);
  readonly mailboxes = new Mailboxes();
  readonly channels: Channels;
  /** Endpoints of every technology that has them, with their channels. */
  readonly endpoints: Endpoints;
  /** Out-of-call text messages, routed per technology. */
  readonly messages: MessageRouter;
  /** Device states derived from channels and endpoints. */
  readonly derivedDeviceStates: DerivedDeviceStates;
  readonly stasis = new Stasis(this.applications);
  /** StasisBroadcast() and its claims (res_stasis_broadcast.so). */
  readonly broadcasts = new ChannelBroadcasts(this.applications);
  /** The one media clock: bridges, generators, playbacks and recordings tick on it. */
  readonly media: MediaEngine;
  readonly generators: ChannelGenerators;
  /** What the core plays in band for an indication a channel's technology could not show. */
  readonly indicationTones: IndicationTones;
  readonly bridges: Bridges;
  /** The parking lots (res_parking.conf) and their parked calls. */
  readonly parking: ParkingLots;
  /** The pickup extension and its sounds (features.conf), read at start. */
  readonly callPickup: CallPickup;
  /** The in-call DTMF features of Dial()'s bridges (features.conf), read at start. */
  readonly bridgeFeatures: BridgeFeatures;
  readonly sounds: Sounds;
  /** Live recordings of channels and bridges, and the stored recordings on disk. */
  readonly recordings: Recordings;
  /** Music-on-hold classes (channel and bridge music on hold, MusicOnHold()). */
  readonly moh: MusicOnHold;
  /** TALK_DETECT on channels. */
  readonly talkDetection: TalkDetection;
  /** Media played to channels and bridges (ARI playbacks and the dialplan's Playback). */
  readonly playbacks: Playbacks;
  /** Extension states from the dialplan's hints (EXTENSION_STATE(), watchers). */
  readonly extensionStates: ExtensionStates;
  /** The channel technologies (modules `chan_*.so`) and the contexts they run with. */
  readonly technologies: Technologies;
  /** Call detail records and channel event logging (docs/cdr.md), built from the core's events. */
  readonly records: CallRecords;
  /**
   * Reads cdr.conf/cel.conf (the configuration) again and applies it to the call records: set by
   * the composition, which knows where the configuration comes from. `module reload cdr` / `cel`.
   */
  reloadCallRecords: (() => Promise<void>) | undefined;
  /** Which call each recording came from (its target's name and linkedid), kept in the database. */
  readonly recordingOrigins: RecordingOrigins;
  #dialplan: Dialplan;
  #parsedDialplan: ParsedDialplan | undefined;
  #reindexQueued = false;
  /** Extensions modules add while running (a regcontext's), merged at each indexing. */
  readonly runtimeExtensions = new RuntimeExtensions(() => this.#queueReindex());
  /** Log channels handed in by the caller outlive the core; only our own are closed at stop. */
  readonly #ownsLogChannels: boolean;
  #database: SqliteDatabase | undefined;
  /** The astdb (DB() in the dialplan), in the database; open between start() and stop(). */
  #astdb: AstDb | undefined;
  /** Hang-up causes of the last channels to end, for HANGUPCAUSE(); oldest dropped first. */
  readonly #recentHangups = new Map<string, { cause: number; linkedId: string }>();
  #sqliteConfig: SqliteBackend | undefined;
  /** Remembered across restarts of the database: the module's state, not the backend's, decides. */
  #sqliteConfigWrites = true;
  /** Between the end of start() and the beginning of stop(). */
  #started = false;

  constructor(options: KernelOptions) {
    this.config = options.config;
    this.log = options.log;
    this.serverId = options.config.serverId;
    this.#ownsLogChannels = options.logChannels === undefined;
    this.logChannels = options.logChannels ?? new LogChannels({ logsDir: options.config.dirs.logs, maxChannels: options.config.logging.maxLogChannels });
    const eventLogSettings = options.config.ari.eventLog;
    this.eventLog = new EventLog(eventLogSettings, this.serverId, (app) => this.applications.get(app) !== undefined);
    this.eventLog.onError = (err) => this.log.error({ err }, 'writing the event log to the database failed; the events stay in memory');
    this.applications.eventLog = this.eventLog;
    this.applications.reconnectGraceMs = eventLogSettings.reconnectGraceSeconds * 1000;
    this.applications.maxWideApps = options.config.ari.maxSubscribeAllApps;
    this.globalVars.maxBytes = options.config.variables.maxGlobalBytes;
    this.stasis.waitingIndication = eventLogSettings.waitingIndication;

    this.#fileConfigObjects = options.fileConfigObjects ?? {};
    const fileConfig = new FileBackend(mergeConfigObjects(this.#fileConfigObjects, options.config.configObjects));
    this.dynamicConfig.attachBackend(fileConfig);
    registerConfigTypes(this.dynamicConfig, options.configTypes ?? []);
    registerFileOnlyTypes(this.dynamicConfig, fileConfig);

    this.channels = new Channels({
      applications: this.applications,
      channelvars: options.config.ari.channelvars,
      defaultLanguage: options.config.language,
      // 0 is automatic: unlimited channels let one loop or flood spend every descriptor or the heap.
      maxChannels: options.config.maxChannels || automaticChannelLimit(),
      maxVariableBytes: options.config.variables.maxChannelBytes,
      functions: options.functions,
      // Called only once channels exist, after the tones below are made.
      inbandIndication: (channel, indication) => this.indicationTones.emulate(channel, indication),
      reportError: (err, channel, during) => this.log.error({ err, channel: channel.name }, `channel ${during} failed; carrying on`),
    });
    this.objects.register('channel', (id) => this.channels.get(id)?.snapshot());
    this.records = new CallRecords({
      settings: options.config,
      logsDir: options.config.dirs.logs,
      linkedIdOf: (id) => this.channels.get(id)?.linkedId,
      onError: (err, during) => this.log.error({ err }, `${during} failed`),
    });
    this.applications.observe((event) => this.records.observe(event));
    this.recordingOrigins = new RecordingOrigins((err) => this.log.error({ err }, 'remembering where a recording came from failed'));
    this.applications.observe((event) => {
      if (event.type === 'RecordingStarted') this.#rememberOrigin(event.recording.name, event.recording.target_uri);
    });
    this.applications.onObserverError = (err, event) => this.log.error({ err, event: event.type }, 'call records failed on an event; carrying on');
    this.media = new MediaEngine({
      manualClock: options.manualClock,
      onError: (err) => this.log.error({ err }, 'media clock listener failed'),
    });
    this.generators = new ChannelGenerators(this.media);
    this.indicationTones = new IndicationTones(this.generators);
    this.bridges = new Bridges(
      this.applications,
      this.media,
      () => (this.modules.isRunning(MODULE_NAMES.musicOnHold) ? this.moh.stream() : undefined),
      (err, bridge, during) => this.log.error({ err, bridge: bridge.id }, `bridge ${during} failed; carrying on`),
    );
    this.bridges.maxBridges = options.config.maxBridges;
    this.mailboxes.maxMailboxes = options.config.maxMailboxes;
    this.deviceStates.maxControlled = options.config.maxDeviceStates;
    this.objects.register('bridge', (id) => this.bridges.shown(id)?.eventSnapshot());
    this.recordings = new Recordings({
      dir: options.config.dirs.recordings,
      media: this.media,
      applications: this.applications,
      channels: this.channels,
      log: this.log,
    });
    // Generated prompts only fill in for what the sound directories lack.
    this.sounds = new Sounds(options.config.dirs.sounds, [generatedSoundsDir(options.config.dirs.data)]);
    this.moh = new MusicOnHold({
      directory: options.config.dirs.moh,
      classDirectories: options.config.mohClasses,
      available: () => this.modules.isRunning(MODULE_NAMES.musicOnHold),
      warn: (message, details) => this.log.warn(details ?? {}, message),
    });
    this.talkDetection = new TalkDetection(this.media, this.channels);
    this.playbacks = new Playbacks({
      applications: this.applications,
      generators: this.generators,
      sounds: this.sounds,
      findRecording: (name) => this.recordings.store.find(name)?.real,
      log: this.log,
    });
    this.endpoints = new Endpoints({
      applications: this.applications,
      channels: this.channels,
      reportError: (err, during) => this.log.error({ err }, `${during} failed; carrying on`),
    });
    this.objects.register('endpoint', (id) => this.endpoints.lookup(id));
    this.messages = new MessageRouter({ endpoints: this.endpoints, applications: this.applications });
    this.derivedDeviceStates = new DerivedDeviceStates({ channels: this.channels, endpoints: this.endpoints, deviceStates: this.deviceStates });
    const parkingConf = loadParkingConf(options.config.origin.asteriskDir);
    for (const line of parkingConf.warnings) this.log.warn(line);
    this.parking = new ParkingLots(parkingConf.config, {
      bridges: this.bridges,
      deviceStates: this.deviceStates,
      log: this.log,
      startMusic: (bridge, mohClass) => {
        try {
          this.moh.startOnBridge(bridge, mohClass);
        } catch (error) {
          this.log.warn({ bridge: bridge.id, mohClass, err: (error as Error).message }, 'parked music class not started; the default music plays');
        }
      },
      // A parked call came back: its park-dial extension joins the dialplan (the file is not read again).
      dialplanChanged: () => {
        if (this.#parsedDialplan) this.#dialplan = this.#indexDialplan(this.#parsedDialplan);
      },
      extensionExists: (context, exten) => this.#dialplan.exists(context, exten),
      announce: (channel, media) => this.#playToEnd(channel, media, 'parking announcement not played'),
    });
    this.#dialplan = this.loadDialplan();
    this.extensionStates = new ExtensionStates({
      deviceStates: this.deviceStates,
      dialplan: () => this.#dialplan,
      reportError: (err) => this.log.error({ err }, 'extension state watcher failed; carrying on'),
    });
    this.channels.onDestroyed((channel) => {
      this.#recentHangups.delete(channel.name);
      this.#recentHangups.set(channel.name, { cause: channel.hangupCause ?? 0, linkedId: channel.linkedId });
      if (this.#recentHangups.size > MAX_RECENT_HANGUPS) this.#recentHangups.delete(this.#recentHangups.keys().next().value!);
    });
    const features = loadFeaturesConf(options.config.origin.asteriskDir);
    for (const line of features.warnings) this.log.warn(line);
    this.callPickup = new CallPickup(features.features, {
      channels: this.channels,
      log: this.log,
      playAndWait: (channel, sound) => this.#playToEnd(channel, `sound:${sound}`, 'pickup sound not played'),
    });
    this.bridgeFeatures = new BridgeFeatures(features.bridgeFeatures, {
      log: this.log,
      play: (channel, sound) => {
        const playback = this.playbacks.playOnChannel(channel, { media: [`sound:${sound}`], language: channel.language, internal: true });
        return { done: this.playbacks.finished(playback).then(() => undefined), stop: () => this.playbacks.stopPlayback(playback) };
      },
      playTone: (channel, tone) => this.indicationTones.playTone(channel, tone),
      exists: (context, exten, callerId) => this.#dialplan.exists(context, exten, 1, callerId),
      matchMore: (context, exten, callerId) => this.#dialplan.matchMore(context, exten, callerId),
      startDialplan: (channel) => this.startDialplan(channel),
    });
    this.technologies = new Technologies({
      channels: this.channels,
      media: this.media,
      log: this.log,
      config: options.config,
      applications: this.applications,
      stasis: this.stasis,
      endpoints: this.endpoints,
      messages: this.messages,
      modules: this.modules,
      dynamicConfig: this.dynamicConfig,
      dialplan: this.#technologyDialplan(),
      extensionStates: this.extensionStates,
      hint: (context, exten) => this.#dialplan.hint(context, exten),
      mailboxes: this.mailboxes,
      bridges: this.bridges,
      pickup: this.callPickup,
      // res_parking's parking_is_exten_park: a blind transfer to an extension whose first priority is Park().
      parkingTransfer: ({ context, exten }) =>
        this.#dialplan.find(context, exten, 1)?.app.toLowerCase() === 'park' ? (transferer, transferee) => this.parking.takeParker(transferer, transferee) : undefined,
      playSound: (channel, sound) => void this.playbacks.playOnChannel(channel, { media: [`sound:${sound}`], language: channel.language, internal: true }),
      musicOnHold: {
        start: (channel, musicClass) => this.moh.startOnChannel(this.generators, channel, musicClass),
        stop: (channel) => this.moh.stopOnChannel(this.generators, channel),
      },
    });
    for (const technology of options.technologies ?? []) this.technologies.add(technology);
    this.modules.register({
      name: 'pbx_config.so',
      description: 'Text extension configuration (the dialplan)',
      supportLevel: 'core',
      load: () => undefined,
      unload: () => undefined,
      reload: () => {
        this.#dialplan = this.loadDialplan();
        if (this.#started) this.checkDialplan();
        this.extensionStates.watchHints();
      },
    });

    // Asterisk's `module reload cdr` and `module reload cel` read cdr.conf and cel.conf again.
    for (const [name, description] of [
      ['cdr', 'CDR Engine (cdr.conf)'],
      ['cel', 'Channel Event Logging (cel.conf)'],
    ] as const) {
      this.modules.register({ name, description, supportLevel: 'core', load: () => undefined, unload: () => undefined, canUnload: () => false, reload: () => this.reloadCallRecords?.() });
    }

    // `module reload res_parking.so`: res_parking.conf read again; the lots' extensions follow.
    this.modules.register({
      name: 'res_parking.so',
      description: 'Call Parking Resource (res_parking.conf)',
      supportLevel: 'core',
      load: () => undefined,
      unload: () => undefined,
      canUnload: () => false,
      reload: () => {
        const reread = loadParkingConf(this.config.origin.asteriskDir);
        for (const line of reread.warnings) this.log.warn(line);
        this.parking.configure(reread.config);
        if (this.#parsedDialplan) this.#dialplan = this.#indexDialplan(this.#parsedDialplan);
        this.extensionStates.watchHints();
      },
    });

    // Asterisk's built-in `module reload indications`: indications.conf read again (indications-conf.ts).
    this.modules.register({
      name: 'indications',
      description: 'Indication tone zones (indications.conf)',
      supportLevel: 'core',
      load: () => undefined,
      unload: () => undefined,
      canUnload: () => false,
      reload: () => {
        for (const line of loadIndicationsConf(this.config.origin.asteriskDir, { reload: true })) this.log.warn(line);
      },
    });

    registerBuiltinModules(this.modules, {
      setSqliteConfigWrites: (enabled) => {
        this.#sqliteConfigWrites = enabled;
        this.#sqliteConfig?.setWritesEnabled(enabled);
      },
    });
    // Asterisk counts any module reload as a reload of the system (StatusInfo.last_reload_time).
    this.modules.on('reloaded', ({ name }) => {
      this.lastReloadAt = new Date();
      this.log.info({ module: name }, `Reloaded module ${name}`);
    });
    // Run-time loads and unloads are notices in the log channels, as in Asterisk; the many
    // transitions of start-up and shutdown are summarised instead.
    this.modules.on('change', ({ name, status }) => {
      if (!this.#started) return;
      this.log.info({ module: name }, `${status === 'Running' ? 'Loaded' : 'Unloaded'} module ${name}`);
    });
  }

  get dialplan(): Dialplan {
    return this.#dialplan;
  }

  /** The dialplan as last parsed (for the load-time check of what it uses). */
  protected get parsedDialplan(): ParsedDialplan | undefined {
    return this.#parsedDialplan;
  }

  /** Hang-up causes of the last channels to end, by channel name (HANGUPCAUSE()). */
  protected get recentHangups(): ReadonlyMap<string, { readonly cause: number; readonly linkedId: string }> {
    return this.#recentHangups;
  }

  /** The astdb while the core runs; undefined otherwise (functions check it on each call). */
  protected get openAstdb(): AstDb | undefined {
    return this.#astdb;
  }

  /** Runs the dialplan on a channel at its location (the dialplan executor). */
  protected abstract startDialplan(channel: Channel): void;
  /** Runs the dialplan for a received out-of-call message, on a channel of its own. */
  protected abstract runMessageDialplan(message: TextMessage, location: { readonly context: string; readonly exten: string }): void;
  /** Sets variables or writes functions on a channel, all or none (a technology's enterApplication). */
  protected abstract applyVariables(channel: Channel, assignments: readonly VariableAssignment[]): void;
  /** Adds a technology's function or application to the dialplan; each returns its removal. */
  protected abstract registerTechnologyFunction(fn: TechnologyFunction): () => void;
  protected abstract registerTechnologyApplication(application: TechnologyApplication): () => void;
  /**
   * Names what the loaded dialplan uses but the server lacks (logged, not fatal). Run once every
   * module (technologies included) has registered its functions and applications, and at reload.
   */
  protected abstract checkDialplan(): void;

  /** The technologies' view of the dialplan: the abstract members, called only once modules load. */
  #technologyDialplan(): TechnologyDialplan {
    return {
      start: (channel) => this.startDialplan(channel),
      runMessage: (message, location) => this.runMessageDialplan(message, location),
      applyVariables: (channel, assignments) => this.applyVariables(channel, assignments),
      registerFunction: (fn) => this.registerTechnologyFunction(fn),
      registerApplication: (application) => this.registerTechnologyApplication(application),
      extensionExists: (context, exten) => this.#dialplan.exists(context, exten),
      extensionCanMatch: (context, exten) => this.#dialplan.canMatch(context, exten),
      extensions: this.runtimeExtensions,
    };
  }

  /**
   * A configuration file's objects read again (pjsip.conf at reload): the file layer is replaced
   * and each object added, changed or removed is announced as a change, so that whoever builds
   * from them (a technology) rebuilds; objects the YAML `config_objects` define stay the YAML's.
   * Returns how many objects changed.
   */
  replaceFileConfigObjects(tree: ConfigObjectTree): number {
    const before = this.#fileConfigObjects;
    this.#fileConfigObjects = tree;
    const changes = diffConfigObjects(before, tree);
    this.dynamicConfig.replaceBackend(new FileBackend(mergeConfigObjects(tree, this.config.configObjects)), changes);
    return changes.length;
  }

  /** Plays `media` to a channel and resolves when it ends; a failure is a warning (`what`). */
  async #playToEnd(channel: Channel, media: string, what: string): Promise<void> {
    try {
      await this.playbacks.finished(this.playbacks.playOnChannel(channel, { media: [media], language: channel.language, internal: true }));
    } catch (error) {
      this.log.warn({ channel: channel.name, media, err: (error as Error).message }, what);
    }
  }

  /**
   * Run-time extensions changed: the dialplan is indexed again once the current task ends, so
   * that many registrations arriving together cost one indexing.
   */
  #queueReindex(): void {
    if (this.#reindexQueued) return;
    this.#reindexQueued = true;
    queueMicrotask(() => {
      this.#reindexQueued = false;
      if (this.#parsedDialplan) this.#dialplan = this.#indexDialplan(this.#parsedDialplan);
    });
  }

  /** The dialplan as read, with the extensions the parking lots register (res_parking's registrar) and the run-time ones. */
  #indexDialplan(parsed: ParsedDialplan): Dialplan {
    return indexDialplan(parsed, this.parking, this.runtimeExtensions, this.log);
  }

  /** The configured extensions.conf, or the embedded default. A syntax error names file and line. */
  private loadDialplan(): Dialplan {
    const parsed = readDialplan(this.config.dialplan.file);
    this.#parsedDialplan = parsed;
    for (const warning of parsed.warnings ?? []) this.log.warn(warning);
    const dialplan = this.#indexDialplan(parsed);
    setDialplanGlobals(dialplan, this.globalVars, this.log);
    return dialplan;
  }

  /** The target's name and call of a recording that starts (a channel, or a bridge and its first member's call). */
  #rememberOrigin(name: string, targetUri: string): void {
    const [kind, id = ''] = targetUri.split(':', 2);
    const bridge = kind === 'bridge' ? this.bridges.get(id) : undefined;
    const channel = kind === 'channel' ? this.channels.get(id) : bridge ? this.channels.get(bridge.channelIds()[0] ?? '') : undefined;
    const targetName = kind === 'channel' ? (channel?.name ?? id) : bridge?.name || id;
    this.recordingOrigins.remember({ name, target_uri: targetUri, target_name: targetName, linkedid: channel?.linkedId ?? '', started: Date.now() });
  }

  /** The server's SQLite database; open between start() and stop(). */
  get database(): SqliteDatabase {
    if (!this.#database) throw new Error('The database is not open: the core has not been started');
    return this.#database;
  }

  /** The astdb; open between start() and stop(). */
  get astdb(): AstDb {
    if (!this.#astdb) throw new Error('The astdb is not open: the core has not been started');
    return this.#astdb;
  }

  async start(): Promise<void> {
    // No console channel by default: the server's own log already goes to the console (one output).
    this.logChannels.openDefaults({ console: false });
    this.#database = openDatabase(databasePath(this.config.dirs.data));
    this.#sqliteConfig = new SqliteBackend(this.#database);
    this.#sqliteConfig.setWritesEnabled(this.#sqliteConfigWrites);
    this.dynamicConfig.attachBackend(this.#sqliteConfig);
    this.deviceStates.open(this.#database);
    this.#astdb = new AstDb(this.#database);
    this.extensionStates.watchHints();
    this.mailboxes.open(this.#database);
    if (this.config.ari.eventLog.persist) this.eventLog.open(this.#database);
    this.records.start(this.#database);
    this.recordingOrigins.attach(this.#database);
    this.eventLog.start();
    const generatedDir = generatedSoundsDir(this.config.dirs.data);
    const generated = ensureBuiltinSounds(generatedDir, this.config.dirs.sounds[0]);
    if (generated > 0) this.log.info({ count: generated, dir: generatedDir }, 'generated built-in prompts');
    this.sounds.rescan();
    this.recordings.open();
    const mohFile = this.moh.ensureDefault();
    if (mohFile) this.log.info({ file: mohFile }, 'generated the default music-on-hold class');
    this.talkDetection.start();
    await this.modules.loadAll();
    this.media.start();
    this.#started = true;
    // Technologies have registered their functions and applications by now.
    this.checkDialplan();
    this.log.debug({ modules: this.modules.list().filter((m) => m.status === 'Running').length }, 'modules loaded');
  }

  async stop(): Promise<void> {
    // First, before anything can fail or wait: every recording's file is finalised (SIGTERM ends here).
    this.recordings.endAll();
    this.channels.endAll();
    // Technologies close their listeners and sockets, the last started first (their modules stay
    // listed until unloadAll below, which finds nothing left to stop).
    for (const failure of await this.technologies.stopAll()) this.log.warn({ err: failure }, 'channel technology failed to stop');
    // A channel a technology finished creating meanwhile goes too.
    this.channels.endAll();
    this.parking.clear();
    this.bridges.endAll();
    this.playbacks.endAll();
    this.talkDetection.stop();
    this.media.stop();
    this.#started = false;
    for (const failure of await this.modules.unloadAll()) this.log.warn({ err: failure }, 'module failed to unload');
    this.dynamicConfig.detachBackend('sqlite');
    this.#sqliteConfig = undefined;
    this.deviceStates.close();
    this.#astdb = undefined;
    this.mailboxes.close();
    // The events of the shutdown itself (hang-ups) are written before the database closes.
    this.applications.close();
    this.eventLog.close();
    await this.records.stop();
    this.recordingOrigins.detach();
    this.#database?.close();
    this.#database = undefined;
    if (this.#ownsLogChannels) await this.logChannels.close();
  }
}
