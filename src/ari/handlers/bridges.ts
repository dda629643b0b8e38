// Bridges: creation, membership, variables, video source and music on hold. The mixing is the
// core's (src/core/bridges/*); this file maps parameters onto it with the checks and messages of
// Asterisk's res/ari/resource_bridges.c. Bridge play and record live with playbacks and recordings.
import type { Bridge } from '../../core/bridges/bridge.ts';
import { NOT_IN_STASIS, resolveBridgeType, type ListedBridge } from '../../core/bridges/bridges.ts';
import type { Channel } from '../../core/channels/channel.ts';
import { addChannelsToBridge } from '../../control/bridge-control.ts';
import { parseVariables } from '../../control/originate.ts';
import type { Core } from '../../control/core.ts';
import { NotFoundError } from '../../core/errors.ts';
import { checkVariable, checkVariableName, MAX_CHANNEL_VARIABLES } from '../../core/variable-limits.ts';
import { AriError, defineHandlers } from '../handler.ts';
import type { Model } from '../../spec/index.ts';

type BridgeJson = Model<'Bridge'>;

const json = (bridge: ListedBridge): BridgeJson => bridge.snapshot();

/** Asterisk's message when the variable operations cannot find the bridge. */
const NO_BRIDGE_FOR_VARIABLES = 'Bridge Not Found';

/**
 * The bridge an operation acts on. A basic bridge (Dial()'s) exists but is no application's:
 * 409, as Asterisk's find_bridge answers; the bulk variable operations, which look among the
 * applications' bridges only, answer 404 for it (`basicIsConflict` false).
 */
function findBridge(core: Core, bridgeId: string, message = 'Bridge not found', basicIsConflict = true): Bridge {
  const bridge = core.bridges.get(bridgeId);
  if (bridge) return bridge;
  if (basicIsConflict && core.bridges.shown(bridgeId)) throw new AriError(409, NOT_IN_STASIS);
  throw new NotFoundError(message);
}

/**
 * The channels of an addChannel/removeChannel list, as Asterisk's control_list_create checks them:
 * empty entries are skipped and an empty list is 400; an unknown channel is 400; a channel that is
 * not in a Stasis application is 422.
 */
function controlledChannels(core: Core, ids: readonly string[]): Channel[] {
  const wanted = ids.map((id) => id.trim()).filter((id) => id !== '');
  if (wanted.length === 0) throw new AriError(400, 'Channel parameter is required');
  const channels: Channel[] = [];
  for (const id of wanted) {
    const channel = core.channels.get(id);
    if (!channel) throw new AriError(400, 'Channel not found');
    channels.push(channel);
  }
  for (const channel of channels) {
    if (!channel.stasis) throw new AriError(422, 'Channel not in Stasis application');
  }
  return channels;
}

interface CreateParams {
  readonly type?: readonly string[];
  readonly bridgeId?: string;
  readonly name?: string;
  readonly variables?: Record<string, unknown>;
  readonly mute?: boolean;
  readonly absorbDTMF?: boolean;
}

function createBridge(core: Core, params: CreateParams): BridgeJson {
  const types = (params.type ?? []).map((token) => token.trim()).filter((token) => token !== '');
  // Checked before anything exists: an impossible combination or bad variables create nothing.
  resolveBridgeType(types);
  const assignments = parseVariables(params.variables);
  const bridge = core.bridges.create({
    id: params.bridgeId,
    name: params.name,
    types,
    mute: params.mute,
    absorbDtmf: params.absorbDTMF,
  });
  for (const { name, value, reportEvents } of assignments) bridge.setVariable(name, value, reportEvents);
  return json(bridge);
}

function readBridgeVariable(bridge: Bridge, name: string): string {
  checkVariableName(name);
  const value = bridge.variables.get(name);
  if (value === undefined) throw new NotFoundError('Provided variable was not found');
  return value;
}

function writeBridgeVariable(bridge: Bridge, name: string, value: string | undefined, reportEvents: boolean): void {
  if (name === '') throw new AriError(400, 'Variable name is required');
  checkVariable(name, value);
  // A bridge holds at most as many variables as a channel.
  if (value !== undefined && bridge.variables.size >= MAX_CHANNEL_VARIABLES && !bridge.variables.has(name)) {
    throw new AriError(400, `Too many variables on the bridge: at most ${MAX_CHANNEL_VARIABLES}; not creating ${name.slice(0, 64)}`);
  }
  bridge.setVariable(name, value, reportEvents);
}

export const bridgesHandlers = defineHandlers('bridges', {
  list: (_params, { core }) => core.bridges.listShown().map(json),

  create: (params, { core }) => createBridge(core, params),

  createWithId: (params, { core }) => createBridge(core, params),

  get: ({ bridgeId }, { core }) => {
    const bridge = core.bridges.shown(bridgeId);
    if (!bridge) throw new NotFoundError('Bridge not found');
    return json(bridge);
  },

  destroy: ({ bridgeId }, { core }) => {
    findBridge(core, bridgeId).destroy();
  },

  getBridgeVar: ({ bridgeId, variable }, { core }) => {
    if (variable === '') throw new AriError(400, 'Variable name is required');
    return { value: readBridgeVariable(findBridge(core, bridgeId, NO_BRIDGE_FOR_VARIABLES), variable) };
  },

  setBridgeVar: ({ bridgeId, variable, value, report_events }, { core }) => {
    if (variable === '') throw new AriError(400, 'Variable name is required');
    writeBridgeVariable(findBridge(core, bridgeId, NO_BRIDGE_FOR_VARIABLES), variable, value, report_events);
  },

  getBridgeVars: ({ bridgeId, variables }, { core }) => {
    if (variables.length === 0) throw new AriError(400, 'At least one variable name is required');
    const bridge = findBridge(core, bridgeId, NO_BRIDGE_FOR_VARIABLES, false);
    // A Map, then own properties: names such as `__proto__` are keys like any other.
    const values = new Map<string, string>();
    for (const entry of variables) {
      const name = entry.trim();
      if (name === '') throw new AriError(400, 'Variable names are required');
      values.set(name, readBridgeVariable(bridge, name));
    }
    return { variables: Object.fromEntries(values) };
  },

  setBridgeVars: ({ bridgeId, variables }, { core }) => {
    const bridge = findBridge(core, bridgeId, NO_BRIDGE_FOR_VARIABLES, false);
    const assignments = parseVariables(variables);
    if (assignments.length === 0) throw new AriError(400, 'At least one variable is required');
    for (const { name, value, reportEvents } of assignments) writeBridgeVariable(bridge, name.trim(), value, reportEvents);
  },

  addChannel: ({ bridgeId, channel, role, absorbDTMF, mute, inhibitConnectedLineUpdates }, { core }) => {
    const bridge = findBridge(core, bridgeId);
    const channels = controlledChannels(core, channel);
    // A role given applies to every channel added and replaces the roles they had; none clears them.
    const roles = role?.trim() ? [role.trim()] : [];
    // false (the declared default) leaves the bridge's own defaults from its creation in force.
    const options = { roles, absorbDtmf: absorbDTMF || undefined, mute: mute || undefined, inhibitConnectedLineUpdates };
    // As in Asterisk, a channel being recorded on its own cannot join a bridge (409).
    addChannelsToBridge(core, bridge, channels, options);
  },

  removeChannel: ({ bridgeId, channel }, { core }) => {
    const bridge = findBridge(core, bridgeId);
    const channels = controlledChannels(core, channel);
    for (const member of channels) {
      if (!bridge.has(member)) throw new AriError(422, 'Channel not in this bridge');
    }
    for (const member of channels) bridge.remove(member);
  },

  setVideoSource: ({ bridgeId, channelId }, { core }) => {
    const bridge = findBridge(core, bridgeId);
    const channel = core.channels.get(channelId);
    if (!channel) throw new NotFoundError('Channel not found');
    if (!channel.stasis) throw new AriError(409, 'Channel not in Stasis application');
    if (!bridge.has(channel)) throw new AriError(422, 'Channel not in bridge');
    bridge.setVideoSource(channel);
  },

  clearVideoSource: ({ bridgeId }, { core }) => {
    findBridge(core, bridgeId).clearVideoSource();
  },

  startMoh: ({ bridgeId, mohClass }, { core }) => {
    core.moh.startOnBridge(findBridge(core, bridgeId), mohClass);
  },

  stopMoh: ({ bridgeId }, { core }) => {
    core.moh.stopOnBridge(findBridge(core, bridgeId));
  },
});
