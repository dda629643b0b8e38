// Views of things every member has a part of, combined from every member's answer: an endpoint
// (a phone registered through A is `online` there, its channels may be on A and C) and a
// technology device's state (PJSIP/alice in use on A, idle on B). The forwarder asks every live
// member the same request and hands the answers here; each answer is checked, since a member's
// reply is as untrusted as anything from NATS.
import { aggregateDeviceStates } from '../core/derived-device-states.ts';
import { DEVICE_STATES, DeviceStates, type DeviceStateValue } from '../core/device-states.ts';
import type { ClusterAriResponse } from './wire.ts';

/** Channel ids listed at most for one endpoint across the members. */
const MAX_CHANNEL_IDS = 10_000;
/** Endpoints in a merged listing at most. */
const MAX_ENDPOINTS = 100_000;

type Item = Record<string, unknown>;

/** How the answers of every member (this one's first) to one operation become one answer. */
export type Combiner = (own: ClusterAriResponse, remote: ReadonlyArray<ClusterAriResponse | undefined>) => ClusterAriResponse;

const isItem = (value: unknown): value is Item => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Two members' views of one endpoint: online if it is online anywhere; its channels on every member. */
function mergeEndpoint(into: Item, other: Item): Item {
  const state = into.state === 'online' || other.state === 'online' ? 'online' : into.state;
  const ids = new Set<string>();
  for (const list of [into.channel_ids, other.channel_ids]) {
    if (!Array.isArray(list)) continue;
    for (const id of list) if (typeof id === 'string' && ids.size < MAX_CHANNEL_IDS) ids.add(id);
  }
  return { ...into, ...(state !== undefined ? { state } : {}), channel_ids: [...ids] };
}

const endpointKey = (item: Item): string => `${String(item.technology)}/${String(item.resource)}`;

/** `GET /endpoints`, `/endpoints/{tech}`: every member's endpoints, one entry per endpoint, merged. */
export const combineEndpointLists: Combiner = (own, remote) => {
  if (own.status !== 200 || !Array.isArray(own.json)) return own;
  const merged = new Map<string, Item>();
  for (const answer of [own, ...remote]) {
    if (!answer || answer.status !== 200 || !Array.isArray(answer.json)) continue;
    for (const item of answer.json) {
      if (!isItem(item)) continue;
      const key = endpointKey(item);
      const known = merged.get(key);
      if (known) merged.set(key, mergeEndpoint(known, item));
      else if (merged.size < MAX_ENDPOINTS) merged.set(key, mergeEndpoint(item, {}));
    }
  }
  return { ...own, json: [...merged.values()] };
};

/** `GET /endpoints/{tech}/{resource}`: found anywhere is found; merged as in a listing. */
export const combineEndpoint: Combiner = (own, remote) => {
  let merged: Item | undefined;
  let first: ClusterAriResponse | undefined;
  for (const answer of [own, ...remote]) {
    if (!answer || answer.status !== 200 || !isItem(answer.json)) continue;
    first ??= answer;
    merged = merged ? mergeEndpoint(merged, answer.json) : mergeEndpoint(answer.json, {});
  }
  return first && merged ? { ...first, json: merged } : own;
};

/**
 * `GET /deviceStates/{name}` of a device the members derive each for themselves (a technology's
 * `PJSIP/alice`): the members' states aggregated as Asterisk aggregates a device's channels
 * (ast_devstate_aggregate: in use anywhere is in use; ringing here and in use there is RINGINUSE;
 * available anywhere beats unavailable). The ARI-controlled and `Custom:` states are shared
 * through their bucket, so this member's answer is already everyone's.
 */
export const combineDeviceState: Combiner = (own, remote) => {
  if (own.status !== 200 || !isItem(own.json) || typeof own.json.name !== 'string') return own;
  const name = own.json.name;
  if (DeviceStates.isControlled(name) || DeviceStates.isCustom(name)) return own;
  const states: DeviceStateValue[] = [];
  for (const answer of [own, ...remote]) {
    if (!answer || answer.status !== 200 || !isItem(answer.json)) continue;
    const state = answer.json.state;
    if (typeof state === 'string' && (DEVICE_STATES as readonly string[]).includes(state)) states.push(state as DeviceStateValue);
  }
  // Members that do not know the device say UNKNOWN; one that does outranks them.
  const known = states.filter((state) => state !== 'UNKNOWN');
  return { ...own, json: { name, state: known.length === 0 ? 'UNKNOWN' : aggregateDeviceStates(known) } };
};

const COMBINED: Readonly<Record<string, Combiner>> = {
  'endpoints.list': combineEndpointLists,
  'endpoints.listByTech': combineEndpointLists,
  'endpoints.get': combineEndpoint,
  'deviceStates.get': combineDeviceState,
};

/**
 * How an operation (`resource.nickname`) is answered from every member's answer, or undefined
 * when this member's answer is everyone's (a shared `Stasis:`/`Custom:` device state: no need to ask).
 */
export function combinerFor(operation: string, pathParams: Readonly<Record<string, string>>): Combiner | undefined {
  if (operation === 'deviceStates.get') {
    const name = pathParams.deviceName ?? '';
    if (DeviceStates.isControlled(name) || DeviceStates.isCustom(name)) return undefined;
  }
  return COMBINED[operation];
}
