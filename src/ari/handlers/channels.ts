// Channels: listing, origination, call control and variables. The telephony work is the core's
// (src/core/channels/*); this file maps parameters onto it. Core failures become statuses in the
// dispatcher: NotFound 404, Conflict 409 (not in Stasis, id in use), State 412, Invalid 400,
// Unprocessable 422.
import { SECRET_CHANNEL_VARIABLES, withoutSecretValues } from '../read-only-views.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { TransferProgressState } from '../../core/channels/technology.ts';
import {
  continueInDialplan,
  findChannel,
  findControllable,
  findControlled,
  hangupCause,
  readVariable,
  redirect,
  setMuted,
  writeVariable,
} from '../../control/channel-control.ts';
import { sendDtmf } from '../../core/channels/dtmf-sender.ts';
import { SOFT_HANGUP } from '../../core/channels/causes.ts';
import { setRtpQualityVariables } from '../../core/rtp-quality-variables.ts';
import { checkRoomForVariables, createChannel, dialCreated, originate, parseVariables, splitAppArgs, type OriginateRequest } from '../../control/originate.ts';
import { AriError, defineHandlers, type RequestContext } from '../handler.ts';
import type { Model } from '../../spec/index.ts';

type ChannelJson = Model<'Channel'>;

const json = (channel: Channel): ChannelJson => channel.snapshot();

const TRANSFER_STATES: ReadonlyMap<string, TransferProgressState> = new Map(
  (['channel_progress', 'channel_answered', 'channel_unavailable', 'channel_declined'] as const).map((state) => [state, state]),
);

/** Asterisk's message when the variable operations cannot find the channel. */
const NO_CHANNEL_FOR_VARIABLES = 'Provided channel was not found';

function originateWith(request: OriginateRequest, { core }: RequestContext): ChannelJson {
  return originate(core, request).snapshot;
}

export const channelsHandlers = defineHandlers('channels', {
  list: (_params, { core }) => core.channels.list().map(json),

  get: ({ channelId }, { core }) => json(findChannel(core.channels, channelId)),

  originate: (params, ctx) => originateWith(params, ctx),

  originateWithId: (params, ctx) => originateWith(params, ctx),

  create: (params, { core }) => createChannel(core, params).snapshot,

  dial: ({ channelId, caller, timeout }, { core }) => {
    const channel = findChannel(core.channels, channelId);
    // Answers at once; Dial events report the progress of the call.
    void dialCreated(core, channel, { caller, timeout });
  },

  hangup: ({ channelId, reason, reason_code }, { core }) => {
    const channel = findChannel(core.channels, channelId);
    // As resource_channels.c: the RTP figures are left in RTPAUDIOQOS* before the hang-up is requested.
    setRtpQualityVariables(channel);
    // ast_softhangup(AST_SOFTHANGUP_EXPLICIT): ChannelHangupRequest's cause is that flag (32).
    channel.hangup(hangupCause(reason, reason_code), { soft: SOFT_HANGUP.explicit });
  },

  continueInDialplan: ({ channelId, context, extension, priority, label }, { core }) => {
    continueInDialplan(core, findControllable(core, channelId), { context, extension, priority, label });
  },

  move: ({ channelId, app, appArgs }, { core }) => {
    const channel = findControlled(core.channels, core.stasis, channelId);
    // A destination that is not active raises ApplicationMoveFailed; the request still succeeds.
    core.stasis.move(channel, app, splitAppArgs(appArgs));
  },

  redirect: ({ channelId, endpoint }, { core }) => {
    redirect(findControllable(core, channelId), endpoint);
  },

  answer: ({ channelId }, { core }) => {
    findControllable(core, channelId).answer();
  },

  ring: ({ channelId }, { core }) => {
    findControllable(core, channelId).indicate('ringing');
  },

  ringStop: ({ channelId }, { core }) => {
    // Asterisk stops ringing by indicating -1 (stop every indication).
    findControllable(core, channelId).indicate('stop');
  },

  progress: ({ channelId }, { core }) => {
    findControllable(core, channelId).indicate('progress');
  },

  // As Asterisk: the channel must be in Stasis (404, 409), then `states` is checked; the state goes
  // to the technology (a SIP NOTIFY to the phone that sent REFER). No transfer in progress: nothing.
  transfer_progress: ({ channelId, states }, { core }) => {
    const channel = findControlled(core.channels, core.stasis, channelId);
    if (states === '') throw new AriError(400, 'states must not be empty');
    const state = TRANSFER_STATES.get(states.toLowerCase());
    if (!state) throw new AriError(400, 'Invalid states value');
    channel.driver.transferProgress?.(state);
  },

  sendDTMF: ({ channelId, dtmf, before, between, duration, after }, { core, log }) => {
    const channel = findControllable(core, channelId);
    if (!dtmf) throw new AriError(400, 'DTMF is required');
    // Answers at once; the digits follow on their timers.
    sendDtmf(channel, dtmf, { before, between, duration, after }).catch((err: unknown) => {
      log.warn({ err, channel: channel.name }, 'sending DTMF failed');
    });
  },

  mute: ({ channelId, direction }, { core }) => {
    setMuted(findControllable(core, channelId), direction, true);
  },

  unmute: ({ channelId, direction }, { core }) => {
    setMuted(findControllable(core, channelId), direction, false);
  },

  hold: ({ channelId }, { core }) => {
    findControllable(core, channelId).hold();
  },

  unhold: ({ channelId }, { core }) => {
    findControllable(core, channelId).unhold();
  },

  getChannelVar: ({ channelId, variable }, { core, user }) => {
    if (variable === '') throw new AriError(400, 'Variable name is required');
    const channel = findChannel(core.channels, channelId, NO_CHANNEL_FOR_VARIABLES);
    const value = readVariable(core.pbx, channel, variable);
    return { value: user.readOnly ? withoutSecretValues(value, secretValuesOf(channel)) : value };
  },

  setChannelVar: ({ channelId, variable, value, report_events }, { core }) => {
    if (variable === '') throw new AriError(400, 'Variable name is required');
    const channel = findControlled(core.channels, core.stasis, channelId);
    writeVariable(channel, variable, value, report_events);
  },

  getChannelVars: ({ channelId, variables }, { core, user }) => {
    if (variables.length === 0) throw new AriError(400, 'At least one variable name is required');
    const channel = findChannel(core.channels, channelId, NO_CHANNEL_FOR_VARIABLES);
    // A Map, then own properties: names such as `__proto__` are keys like any other.
    const values = new Map<string, string>();
    for (const entry of variables) {
      const name = entry.trim();
      if (name === '') throw new AriError(400, 'Variable names are required');
      const value = readVariable(core.pbx, channel, name);
      values.set(name, user.readOnly ? withoutSecretValues(value, secretValuesOf(channel)) : value);
    }
    return { variables: Object.fromEntries(values) };
  },

  setChannelVars: ({ channelId, variables }, { core }) => {
    const channel = findChannel(core.channels, channelId, NO_CHANNEL_FOR_VARIABLES);
    core.stasis.require(channel);
    const assignments = parseVariables(variables);
    checkRoomForVariables(channel, assignments, true);
    for (const { name, value, reportEvents } of assignments) {
      writeVariable(channel, name.trim(), value, reportEvents);
    }
  },
});

/** The values of the channel's secret variables, which a read-only user's reads never show. */
function secretValuesOf(channel: { getVariable(name: string): string | undefined }): string[] {
  return [...SECRET_CHANNEL_VARIABLES].map((name) => channel.getVariable(name) ?? '');
}
