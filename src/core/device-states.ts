// Device states. Names beginning with `Stasis:` are controlled through ARI and persist in the
// database; every other name is derived by the subsystem that owns it (channels, endpoints) and
// is read-only. Any device state may be subscribed to. The ARI-controlled and `Custom:` states are
// a SharedStore: a cluster member shares them with the others (docs/cluster.md).
import type { Applications } from './applications.ts';
import type { SqliteDatabase } from './database.ts';
import { ConflictError, InvalidError, NotFoundError, UnavailableError } from './errors.ts';
import type { SharedStore, SharedWrite, SharedWriteListener } from './shared-writes.ts';
import { formatAriDate } from '../util/ari-date.ts';

export const DEVICE_STATES = ['UNKNOWN', 'NOT_INUSE', 'INUSE', 'BUSY', 'INVALID', 'UNAVAILABLE', 'RINGING', 'RINGINUSE', 'ONHOLD'] as const;
export type DeviceStateValue = (typeof DEVICE_STATES)[number];

/** Most `Custom:` devices a dialplan may create. */
export const MAX_CUSTOM_DEVICES = 10_000;
/** Default of `max_device_states`. */
export const DEFAULT_MAX_CONTROLLED_DEVICES = 10_000;
/**
 * Longest `Custom:` device name: a dialplan may build the name from a caller's data (`${...}` up to
 * 64 Ki), and 10,000 such names would hold hundreds of megabytes in memory and the database.
 */
export const MAX_CUSTOM_DEVICE_NAME_LENGTH = 255;

export interface DeviceStateSnapshot {
  readonly name: string;
  readonly state: DeviceStateValue;
}

const CONTROLLED_PREFIX = 'stasis:';
/** Devices the dialplan sets with DEVICE_STATE(Custom:name)=STATE, as func_devstate provides. */
const CUSTOM_PREFIX = 'custom:';

export type DeviceStateListener = (change: DeviceStateSnapshot) => void;

/** Derives the state of a device that is not controlled through ARI, or undefined when unknown. */
export type DeviceStateProvider = (name: string) => DeviceStateValue | undefined;

export class DeviceStates implements SharedStore {
  private readonly controlled = new Map<string, DeviceStateValue>();
  /** Most `Stasis:` devices (`max_device_states`): each is a row and an entry held for good. */
  maxControlled = DEFAULT_MAX_CONTROLLED_DEVICES;
  private readonly custom = new Map<string, DeviceStateValue>();
  private readonly providers: DeviceStateProvider[] = [];
  private readonly listeners: DeviceStateListener[] = [];
  private database: SqliteDatabase | undefined;
  /** Told of every ARI-controlled or `Custom:` state written here (a cluster shares it); not of others' writes. */
  onWrite: SharedWriteListener | undefined;

  constructor(private readonly applications: Applications) {}

  static isControlled(name: string): boolean {
    return name.toLowerCase().startsWith(CONTROLLED_PREFIX);
  }

  static isCustom(name: string): boolean {
    return name.toLowerCase().startsWith(CUSTOM_PREFIX) && name.length > CUSTOM_PREFIX.length;
  }

  /** Loads the persisted controlled states. */
  open(database: SqliteDatabase): void {
    this.database = database;
    database.exec('CREATE TABLE IF NOT EXISTS device_states (name TEXT PRIMARY KEY, state TEXT NOT NULL)');
    this.controlled.clear();
    this.custom.clear();
    for (const row of database.prepare('SELECT name, state FROM device_states').all() as DeviceStateSnapshot[]) {
      (DeviceStates.isCustom(row.name) ? this.custom : this.controlled).set(row.name, row.state);
    }
  }

  close(): void {
    this.database = undefined;
  }

  addProvider(provider: DeviceStateProvider): void {
    this.providers.push(provider);
  }

  /** Told of every change (controlled, custom and derived), after the event is published. */
  onChange(listener: DeviceStateListener): void {
    this.listeners.push(listener);
  }

  list(): DeviceStateSnapshot[] {
    return [...this.controlled].map(([name, state]) => ({ name, state }));
  }

  get(name: string): DeviceStateSnapshot {
    const controlled = this.controlled.get(name) ?? this.custom.get(name);
    if (controlled) return { name, state: controlled };
    for (const provider of this.providers) {
      const state = provider(name);
      if (state) return { name, state };
    }
    return { name, state: 'UNKNOWN' };
  }

  set(name: string, state: DeviceStateValue): void {
    this.checkControlled(name);
    if (!this.controlled.has(name) && this.controlled.size >= this.maxControlled) {
      throw new UnavailableError(`Too many Stasis: device states: at most ${this.maxControlled} (max_device_states)`);
    }
    this.store(this.controlled, name, state);
    this.changed(name, state);
    this.onWrite?.({ name, value: state });
  }

  delete(name: string): void {
    this.checkControlled(name);
    if (!this.controlled.has(name)) throw new NotFoundError(`Device state not found: ${name}`);
    this.remove(name);
    this.onWrite?.({ name, value: undefined });
  }

  /**
   * Sets a `Custom:` device (DEVICE_STATE() in the dialplan): persisted like the ARI-controlled
   * ones, and DeviceStateChanged goes to its subscribers when the state changes.
   */
  setCustom(name: string, state: DeviceStateValue): void {
    if (!DeviceStates.isCustom(name)) throw new InvalidError(`Only Custom: devices can be set from the dialplan: ${name.slice(0, 64)}`);
    if (name.length > MAX_CUSTOM_DEVICE_NAME_LENGTH) throw new InvalidError(`Custom: device name longer than ${MAX_CUSTOM_DEVICE_NAME_LENGTH} characters`);
    const before = this.custom.get(name);
    if (before === undefined && this.custom.size >= MAX_CUSTOM_DEVICES) throw new InvalidError(`Too many Custom: devices (${MAX_CUSTOM_DEVICES})`);
    this.store(this.custom, name, state);
    if (before === state) return;
    this.changed(name, state);
    this.onWrite?.({ name, value: state });
  }

  /**
   * Another server's write of a controlled or `Custom:` state (a cluster member's): checked as a
   * write here would be (name, state, bounds: InvalidError beyond them), stored, announced to this
   * server's applications when it changes anything, and not told to onWrite again.
   */
  applyShared(write: SharedWrite): void {
    const { name, value } = write;
    const custom = DeviceStates.isCustom(name);
    if (!custom && (!DeviceStates.isControlled(name) || name.length === CONTROLLED_PREFIX.length)) throw new InvalidError(`Not a shared device state: ${name.slice(0, 64)}`);
    if (name.length > MAX_CUSTOM_DEVICE_NAME_LENGTH) throw new InvalidError(`Device name longer than ${MAX_CUSTOM_DEVICE_NAME_LENGTH} characters`);
    const states = custom ? this.custom : this.controlled;
    if (value === undefined) {
      if (states.has(name)) this.remove(name);
      return;
    }
    if (!(DEVICE_STATES as readonly string[]).includes(value)) throw new InvalidError(`Not a device state: ${value.slice(0, 32)}`);
    const state = value as DeviceStateValue;
    const before = states.get(name);
    if (before === undefined && states.size >= (custom ? MAX_CUSTOM_DEVICES : this.maxControlled)) throw new InvalidError('Too many device states');
    this.store(states, name, state);
    if (before !== state) this.changed(name, state);
  }

  private store(states: Map<string, DeviceStateValue>, name: string, state: DeviceStateValue): void {
    states.set(name, state);
    this.database?.prepare('INSERT INTO device_states (name, state) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET state = excluded.state').run(name, state);
  }

  private remove(name: string): void {
    this.controlled.delete(name);
    this.custom.delete(name);
    this.database?.prepare('DELETE FROM device_states WHERE name = ?').run(name);
    this.changed(name, 'UNKNOWN');
  }

  /** Owners of derived device states call this when one changes. */
  changed(name: string, state: DeviceStateValue): void {
    this.applications.publish(
      { type: 'DeviceStateChanged', timestamp: formatAriDate(), device_state: { name, state } },
      { deviceNames: [name] },
    );
    for (const listener of this.listeners) listener({ name, state });
  }

  private checkControlled(name: string): void {
    if (!DeviceStates.isControlled(name)) throw new ConflictError(`Device state is not controlled through ARI (name must begin with Stasis:): ${name}`);
    if (name.length === CONTROLLED_PREFIX.length) throw new NotFoundError('Device name is missing');
  }
}
