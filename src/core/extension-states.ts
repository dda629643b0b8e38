// Extension states from the dialplan's hints (`exten => 100,hint,Phone/alice&Custom:dnd100`): the
// devices' states aggregated as Asterisk aggregates them, then mapped to an extension state.
// EXTENSION_STATE() reads them; watchers (`onChange`) hear of each change as device states move,
// recomputed only for the hints that name the device that changed.
import { aggregateDeviceStates } from './derived-device-states.ts';
import type { Dialplan } from '../dialplan/dialplan.ts';
import type { DeviceStates, DeviceStateValue } from './device-states.ts';
import { TypedEmitter } from '../util/typed-emitter.ts';

import type { ExtensionState, ExtensionStateChange } from './extension-state-types.ts';

export { EXTENSION_STATES, type ExtensionState, type ExtensionStateChange } from './extension-state-types.ts';

interface ExtensionStateEvents {
  change: ExtensionStateChange;
}

/** Most devices one hint may name; the rest are ignored. */
const MAX_DEVICES_PER_HINT = 64;

/** Asterisk's ast_devstate_to_extenstate. */
export function extensionStateOfDevice(state: DeviceStateValue): ExtensionState {
  switch (state) {
    case 'ONHOLD':
      return 'ONHOLD';
    case 'BUSY':
      return 'BUSY';
    case 'UNAVAILABLE':
    case 'INVALID':
      return 'UNAVAILABLE';
    case 'RINGINUSE':
      return 'RINGINUSE';
    case 'RINGING':
      return 'RINGING';
    case 'INUSE':
      return 'INUSE';
    default:
      return 'NOT_INUSE';
  }
}

/** The devices a hint names: `&`-separated, before any `,` presence part. */
export function hintDevices(hint: string): string[] {
  const comma = hint.indexOf(',');
  const devices = (comma < 0 ? hint : hint.slice(0, comma))
    .split('&')
    .map((device) => device.trim())
    .filter((device) => device !== '');
  return devices.slice(0, MAX_DEVICES_PER_HINT);
}

/** Device names compare with the technology case-insensitive, as derived device states do. */
function deviceKey(name: string): string {
  const slash = name.indexOf('/');
  const colon = name.indexOf(':');
  const end = slash > 0 ? slash : colon > 0 ? colon : 0;
  return `${name.slice(0, end).toLowerCase()}${name.slice(end)}`;
}

interface WatchedHint {
  readonly context: string;
  readonly exten: string;
  readonly hint: string;
  state: ExtensionState;
}

export interface ExtensionStatesOptions {
  readonly deviceStates: DeviceStates;
  readonly dialplan: () => Dialplan;
  /** A watcher failed; the others still hear of the change. */
  readonly reportError?: (error: unknown) => void;
}

export class ExtensionStates extends TypedEmitter<ExtensionStateEvents> {
  readonly #deviceStates: DeviceStates;
  readonly #dialplan: () => Dialplan;
  /** Device key → the hints naming it. */
  #byDevice = new Map<string, WatchedHint[]>();
  #watched: WatchedHint[] = [];

  constructor(options: ExtensionStatesOptions) {
    super(options.reportError && ((error) => options.reportError!(error)));
    this.#deviceStates = options.deviceStates;
    this.#dialplan = options.dialplan;
    options.deviceStates.onChange(({ name }) => this.deviceChanged(name));
  }

  /** The state of a hint's device expression. */
  stateOfHint(hint: string): ExtensionState {
    const devices = hintDevices(hint);
    if (devices.length === 0) return 'UNKNOWN';
    return extensionStateOfDevice(aggregateDeviceStates(devices.map((device) => this.#deviceStates.get(device).state)));
  }

  /** The state of `exten@context` from its hint; UNKNOWN when it has none (as func_extstate answers). */
  state(exten: string, context: string): ExtensionState {
    const hint = this.#dialplan().hint(context, exten);
    return hint === undefined ? 'UNKNOWN' : this.stateOfHint(hint);
  }

  /** Rebuilds the watch list from the dialplan's hints (at start and after each reload). */
  watchHints(): void {
    const byDevice = new Map<string, WatchedHint[]>();
    const watched: WatchedHint[] = [];
    for (const { context, exten, hint } of this.#dialplan().hints()) {
      const entry: WatchedHint = { context, exten, hint, state: this.stateOfHint(hint) };
      watched.push(entry);
      for (const device of hintDevices(hint)) {
        const key = deviceKey(device);
        const list = byDevice.get(key);
        if (list) list.push(entry);
        else byDevice.set(key, [entry]);
      }
    }
    this.#byDevice = byDevice;
    this.#watched = watched;
  }

  /** The hints being watched, with their last state. */
  watchedHints(): readonly Readonly<WatchedHint>[] {
    return this.#watched;
  }

  private deviceChanged(device: string): void {
    const hints = this.#byDevice.get(deviceKey(device));
    if (!hints) return;
    for (const entry of hints) {
      const state = this.stateOfHint(entry.hint);
      if (state === entry.state) continue;
      const previous = entry.state;
      entry.state = state;
      this.emit('change', { context: entry.context, exten: entry.exten, hint: entry.hint, state, previous });
    }
  }
}
