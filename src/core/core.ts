// The telephony core: owns every subsystem and knows nothing of HTTP.
import type { Logger } from 'pino';
import type { PatchbayConfig } from '../config/config.ts';
import { Applications } from './applications.ts';
import { registerBuiltinModules } from './builtin-modules.ts';
import { databasePath, openDatabase, type SqliteDatabase } from './database.ts';
import { registerBuiltinConfigTypes, registerFileOnlyTypes } from './dynamic-config/builtin-types.ts';
import { FileBackend } from './dynamic-config/file-backend.ts';
import { SqliteBackend } from './dynamic-config/sqlite-backend.ts';
import { DynamicConfig } from './dynamic-config/store.ts';
import { DeviceStates } from './device-states.ts';
import { GlobalVariables } from './global-vars.ts';
import { LogChannels } from './log-channels.ts';
import { Mailboxes } from './mailboxes.ts';
import { ModuleRegistry } from './modules.ts';
import { ObjectDirectory } from './objects.ts';

export interface CoreOptions {
  readonly config: PatchbayConfig;
  readonly log: Logger;
  /**
   * The log channels the logger writes to. The logger exists before the core, so the caller that
   * builds it creates these first and hands them over; without them the core makes its own.
   */
  readonly logChannels?: LogChannels;
}

export class Core {
  readonly config: PatchbayConfig;
  readonly log: Logger;
  /** Entity id reported as `asterisk_id` and `system.entity_id`. */
  readonly serverId: string;
  readonly startedAt = new Date();
  lastReloadAt = new Date();
  readonly modules = new ModuleRegistry();
  readonly logChannels: LogChannels;
  readonly dynamicConfig = new DynamicConfig();
  readonly globalVars = new GlobalVariables();
  readonly objects = new ObjectDirectory();
  /** Stasis applications and the event router. */
  readonly applications = new Applications((kind, id) => this.objects.exists(kind, id));
  readonly deviceStates = new DeviceStates(this.applications);
  readonly mailboxes = new Mailboxes();
  /** Log channels handed in by the caller outlive the core; only our own are closed at stop. */
  readonly #ownsLogChannels: boolean;
  #database: SqliteDatabase | undefined;
  #sqliteConfig: SqliteBackend | undefined;
  /** Remembered across restarts of the database: the module's state, not the backend's, decides. */
  #sqliteConfigWrites = true;

  constructor(options: CoreOptions) {
    this.config = options.config;
    this.log = options.log;
    this.serverId = options.config.serverId;
    this.#ownsLogChannels = options.logChannels === undefined;
    this.logChannels = options.logChannels ?? new LogChannels({ logsDir: options.config.dirs.logs });

    const fileConfig = new FileBackend(options.config.configObjects);
    this.dynamicConfig.attachBackend(fileConfig);
    registerBuiltinConfigTypes(this.dynamicConfig);
    registerFileOnlyTypes(this.dynamicConfig, fileConfig);

    registerBuiltinModules(this.modules, {
      setSqliteConfigWrites: (enabled) => {
        this.#sqliteConfigWrites = enabled;
        this.#sqliteConfig?.setWritesEnabled(enabled);
      },
    });
    // Asterisk counts any module reload as a reload of the system (StatusInfo.last_reload_time).
    this.modules.on('reloaded', () => {
      this.lastReloadAt = new Date();
    });
  }

  /** The server's SQLite database; open between start() and stop(). */
  get database(): SqliteDatabase {
    if (!this.#database) throw new Error('The database is not open: the core has not been started');
    return this.#database;
  }

  async start(): Promise<void> {
    this.logChannels.openDefaults({ console: this.config.logging.console });
    this.#database = openDatabase(databasePath(this.config.dirs.data));
    this.#sqliteConfig = new SqliteBackend(this.#database);
    this.#sqliteConfig.setWritesEnabled(this.#sqliteConfigWrites);
    this.dynamicConfig.attachBackend(this.#sqliteConfig);
    this.deviceStates.open(this.#database);
    this.mailboxes.open(this.#database);
    await this.modules.loadAll();
  }

  async stop(): Promise<void> {
    for (const failure of await this.modules.unloadAll()) this.log.warn({ err: failure }, 'module failed to unload');
    this.dynamicConfig.detachBackend('sqlite');
    this.#sqliteConfig = undefined;
    this.deviceStates.close();
    this.mailboxes.close();
    this.#database?.close();
    this.#database = undefined;
    if (this.#ownsLogChannels) this.logChannels.close();
  }
}
