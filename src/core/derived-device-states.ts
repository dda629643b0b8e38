// Device states derived from channels and endpoints, as Asterisk derives them. A channel belongs
// to the device named by its name up to the last `-` (`Phone/alice-00000001` → `Phone/alice`,
// `Proxy/answer@default-00000002;1` → `Proxy/answer@default`) and to its endpoint, if any. A
// device's state aggregates its channels' states (Asterisk's channel-to-device table and its
// aggregation rules); a device without channels has its endpoint's state (online → NOT_INUSE,
// offline → UNAVAILABLE) or none. DeviceStateChanged is raised whenever a derived state changes.
import type { Channel, ChannelState } from './channels/channel.ts';
import type { Channels } from './channels/channels.ts';
import type { DeviceStates, DeviceStateValue } from './device-states.ts';
import type { Endpoints } from './endpoints.ts';
import type { EndpointState } from './endpoint-provider.ts';

/** Asterisk's chan2dev table (main/devicestate.c). */
const CHANNEL_TO_DEVICE: Readonly<Record<ChannelState, DeviceStateValue>> = {
  Down: 'NOT_INUSE',
  Rsrvd: 'INUSE',
  OffHook: 'INUSE',
  Dialing: 'INUSE',
  Ring: 'INUSE',
  Ringing: 'RINGING',
  Up: 'INUSE',
  Busy: 'BUSY',
};

/** The precedence of ast_devstate_aggregate_add. */
const AGGREGATE_ORDER: Readonly<Record<DeviceStateValue, number>> = {
  INVALID: 0,
  UNKNOWN: 1,
  UNAVAILABLE: 2,
  NOT_INUSE: 3,
  ONHOLD: 4,
  RINGING: 5,
  INUSE: 6,
  BUSY: 7,
  RINGINUSE: 8,
};

/** Combines the states of a device's channels as ast_devstate_aggregate does. */
export function aggregateDeviceStates(states: Iterable<DeviceStateValue>): DeviceStateValue {
  let result: DeviceStateValue = 'INVALID';
  let ringing = false;
  let inUse = false;
  for (const state of states) {
    if (state === 'RINGING') ringing = true;
    else if (state === 'INUSE' || state === 'ONHOLD' || state === 'BUSY') inUse = true;
    if (ringing && inUse) result = 'RINGINUSE';
    else if (AGGREGATE_ORDER[state] > AGGREGATE_ORDER[result]) result = state;
  }
  return result;
}

export function channelDeviceState(state: ChannelState): DeviceStateValue {
  return CHANNEL_TO_DEVICE[state];
}

/** The device a channel name belongs to: the name up to its last `-`. */
export function deviceNameOfChannel(name: string): string {
  const dash = name.lastIndexOf('-');
  return dash > 0 ? name.slice(0, dash) : name;
}

function endpointDeviceState(state: EndpointState | undefined): DeviceStateValue {
  if (state === 'online') return 'NOT_INUSE';
  if (state === 'offline') return 'UNAVAILABLE';
  return 'UNKNOWN';
}

/** Device names compare with the technology case-insensitive, the rest exactly. */
function keyOf(name: string): string | undefined {
  const slash = name.indexOf('/');
  if (slash <= 0 || slash === name.length - 1) return undefined;
  return `${name.slice(0, slash).toLowerCase()}${name.slice(slash)}`;
}

/** Device names whose key is kept at once (beyond, the memo starts again: names are peer-chosen). */
const MAX_MEMOISED_KEYS = 4096;

export interface DerivedDeviceStatesOptions {
  readonly channels: Channels;
  readonly endpoints: Endpoints;
  readonly deviceStates: DeviceStates;
}

/**
 * A device's live channels with how many of them count as each state: a state change moves one
 * count, and the aggregate reads the counts. Aggregating the channels themselves on every change
 * cost O(channels of the device) per event, O(n²) for a busy trunk or Local device (50 originate
 * cycles in flight to one Local device: ≈ 20 µs of a 400 µs cycle).
 */
class DeviceChannels {
  readonly channels = new Set<Channel>();
  private readonly counts = new Map<DeviceStateValue, number>();

  add(channel: Channel, state: DeviceStateValue): void {
    this.channels.add(channel);
    this.count(state, 1);
  }

  delete(channel: Channel, state: DeviceStateValue): boolean {
    if (!this.channels.delete(channel)) return false;
    this.count(state, -1);
    return true;
  }

  move(from: DeviceStateValue, to: DeviceStateValue): void {
    this.count(from, -1);
    this.count(to, 1);
  }

  /** As aggregateDeviceStates over every channel's state, whose result does not depend on their order. */
  aggregate(): DeviceStateValue {
    let result: DeviceStateValue = 'INVALID';
    let ringing = false;
    let inUse = false;
    for (const [state, count] of this.counts) {
      if (count === 0) continue;
      if (state === 'RINGING') ringing = true;
      else if (state === 'INUSE' || state === 'ONHOLD' || state === 'BUSY') inUse = true;
      if (AGGREGATE_ORDER[state] > AGGREGATE_ORDER[result]) result = state;
    }
    return ringing && inUse ? 'RINGINUSE' : result;
  }

  /** Channels in use: all but those Down (Asterisk counts every state but Down and Reserved). */
  inUse(): number {
    return this.channels.size - (this.counts.get('NOT_INUSE') ?? 0);
  }

  private count(state: DeviceStateValue, delta: number): void {
    this.counts.set(state, (this.counts.get(state) ?? 0) + delta);
  }
}

const NO_KEYS: readonly string[] = [];

export class DerivedDeviceStates {
  /** Device key → its live channels. */
  private readonly channelsByDevice = new Map<string, DeviceChannels>();
  /**
   * Each live channel's devices and the state it is counted as in their counts. The devices are
   * kept from the channel's creation (its name and endpoint never change), not worked out again
   * when it goes.
   */
  private readonly counted = new Map<Channel, CountedChannel>();
  /**
   * Device name → its key: the channels of one device (every Local pair to one extension, every
   * call of one phone) share a name, whose key was made again for each of them.
   */
  private readonly keys = new Map<string, string | undefined>();
  /** Device key → its technology and resource (see endpointOf), bounded as `keys` is. */
  private readonly endpointParts = new Map<string, readonly [string, string]>();
  /** Device key → the list of that key alone (see keysOf), bounded as `keys` is. */
  private readonly singleKeys = new Map<string, readonly string[]>();
  /** Device key → the last state computed for it, for the devices that have channels or an endpoint. */
  private readonly known = new Map<string, DeviceStateValue>();
  /** Device key → the name events carry (the endpoint's id, or the first channel's device name). */
  private readonly names = new Map<string, string>();
  private readonly endpoints: Endpoints;
  private readonly deviceStates: DeviceStates;

  constructor(options: DerivedDeviceStatesOptions) {
    this.endpoints = options.endpoints;
    this.deviceStates = options.deviceStates;
    options.channels.onCreated((channel) => this.channelCreated(channel));
    options.channels.onDestroyed((channel) => this.channelDestroyed(channel));
    // One listener for every channel's state: a listener per channel (its closure, its entry and
    // the channel's listener table) lived as long as the call.
    options.channels.onStateChanged((channel) => this.channelStateChanged(channel));
    options.endpoints.onChange((change) => {
      const key = keyOf(change.id);
      if (!key) return;
      this.names.set(key, change.id);
      // The state the device had before the change, unless one was computed already.
      const endpointBefore = change.kind === 'added' ? undefined : change.previous;
      this.refresh(key, this.compute(key, endpointBefore));
    });
    options.deviceStates.addProvider((name) => this.state(name));
  }

  /** The derived state of a device, or undefined when nothing is known of it. */
  state(name: string): DeviceStateValue | undefined {
    const key = keyOf(name);
    if (!key) return undefined;
    if (!this.channelsByDevice.has(key) && this.endpointState(key) === undefined) return undefined;
    return this.compute(key, this.endpointState(key));
  }

  private endpointState(key: string): EndpointState | undefined {
    const parts = this.endpointOf(key);
    return this.endpoints.state(parts[0], parts[1]);
  }

  /**
   * A device key split into technology and resource, kept: every channel event of a device asks,
   * and the two slices were two new strings each time (six a Local pair).
   */
  private endpointOf(key: string): readonly [string, string] {
    let parts = this.endpointParts.get(key);
    if (parts === undefined) {
      if (this.endpointParts.size >= MAX_MEMOISED_KEYS) this.endpointParts.clear();
      const slash = key.indexOf('/');
      parts = [key.slice(0, slash), key.slice(slash + 1)];
      this.endpointParts.set(key, parts);
    }
    return parts;
  }

  private compute(key: string, endpointState: EndpointState | undefined): DeviceStateValue {
    const base = endpointDeviceState(endpointState);
    const device = this.channelsByDevice.get(key);
    if (!device || device.channels.size === 0) return base;
    // An endpoint may be BUSY at a number of channels in use, whatever their states (chan_pjsip's device_state_busy_at).
    const parts = this.endpointOf(key);
    const busyAt = this.endpoints.busyAt(parts[0], parts[1]);
    if (busyAt > 0 && device.inUse() >= busyAt) return 'BUSY';
    const aggregate = device.aggregate();
    return aggregate === 'INVALID' ? base : aggregate;
  }

  private keyOf(name: string): string | undefined {
    let key = this.keys.get(name);
    if (key === undefined && !this.keys.has(name)) {
      if (this.keys.size >= MAX_MEMOISED_KEYS) this.keys.clear();
      key = keyOf(name);
      this.keys.set(name, key);
    }
    return key;
  }

  private channelCreated(channel: Channel): void {
    // The channel's endpoint and the device its name names, once each (mostly one of them).
    const endpointId = channel.endpointId;
    const deviceName = deviceNameOfChannel(channel.name);
    const endpointKey = endpointId === undefined ? undefined : this.keyOf(endpointId);
    const deviceKey = this.keyOf(deviceName);
    if (endpointKey !== undefined) this.nameDevice(endpointKey, endpointId!);
    if (deviceKey !== undefined && deviceKey !== endpointKey) this.nameDevice(deviceKey, deviceName);
    const keys = this.keysOf(endpointKey, deviceKey === endpointKey ? undefined : deviceKey);
    const counted: CountedChannel = { state: channelDeviceState(channel.state), keys };
    this.counted.set(channel, counted);
    for (const key of keys) {
      const before = this.known.get(key) ?? this.compute(key, this.endpointState(key));
      let device = this.channelsByDevice.get(key);
      if (!device) this.channelsByDevice.set(key, (device = new DeviceChannels()));
      device.add(channel, counted.state);
      this.refresh(key, before);
    }
  }

  private nameDevice(key: string, name: string): void {
    if (!this.names.has(key)) this.names.set(key, name);
  }

  /**
   * A channel's device keys, in the order it counts in them. Mostly one key, whose list is shared by
   * every channel of that device (read, never written): a list per channel lived as long as the call.
   */
  private keysOf(first: string | undefined, second: string | undefined): readonly string[] {
    if (first !== undefined && second !== undefined) return [first, second];
    const only = first ?? second;
    if (only === undefined) return NO_KEYS;
    let keys = this.singleKeys.get(only);
    if (keys === undefined) {
      if (this.singleKeys.size >= MAX_MEMOISED_KEYS) this.singleKeys.clear();
      keys = [only];
      this.singleKeys.set(only, keys);
    }
    return keys;
  }

  private channelStateChanged(channel: Channel): void {
    if (channel.destroyed) return;
    // A channel counted since its creation (one whose state changed before ChannelCreated is not yet).
    const counted = this.counted.get(channel);
    if (counted === undefined) return;
    const from = counted.state;
    const to = channelDeviceState(channel.state);
    if (from !== to) {
      counted.state = to;
      for (const key of counted.keys) this.channelsByDevice.get(key)?.move(from, to);
    }
    for (const key of counted.keys) this.refresh(key);
  }

  private channelDestroyed(channel: Channel): void {
    const counted = this.counted.get(channel);
    if (counted === undefined) return;
    this.counted.delete(channel);
    const state = counted.state;
    for (const key of counted.keys) {
      const device = this.channelsByDevice.get(key);
      if (!device?.delete(channel, state)) continue;
      if (device.channels.size === 0) this.channelsByDevice.delete(key);
      this.refresh(key);
    }
  }

  /** Recomputes a device's state and raises DeviceStateChanged when it differs from the last one. */
  private refresh(key: string, previous?: DeviceStateValue): void {
    const endpointState = this.endpointState(key);
    const state = this.compute(key, endpointState);
    const before = this.known.get(key) ?? previous ?? 'UNKNOWN';
    const name = this.names.get(key) ?? key;
    if (this.channelsByDevice.has(key) || endpointState !== undefined) {
      this.known.set(key, state);
    } else {
      this.known.delete(key);
      this.names.delete(key);
    }
    if (state !== before) this.deviceStates.changed(name, state);
  }
}

/** A live channel's devices (keys) and the state it is counted as in their counts. */
interface CountedChannel {
  state: DeviceStateValue;
  readonly keys: readonly string[];
}
