// Device and extension states and dialplan look-ups: DEVICE_STATE, EXTENSION_STATE, HINT,
// DIALPLAN_EXISTS, VALID_EXTEN.
import { splitArgs } from '../../dialplan/args.ts';
import { DEVICE_STATES, DeviceStates, type DeviceStateValue } from '../../core/device-states.ts';
import { InvalidError } from '../../core/errors.ts';
import { channelOf, type DialplanFunction, type FunctionCall } from '../function-services.ts';

/** `exten@context`, the context defaulting as func_extstate defaults it. */
function extenAtContext(text: string, fallbackContext: string): { exten: string; context: string } {
  const at = text.indexOf('@');
  if (at < 0) return { exten: text.trim(), context: fallbackContext };
  return { exten: text.slice(0, at).trim(), context: text.slice(at + 1).trim() || fallbackContext };
}

/** Whether context/extension/priority (a number or a label) exist, for the calling channel's caller ID. */
function exists(call: FunctionCall, context: string, exten: string, priorityText: string): boolean {
  const dialplan = call.services?.dialplan();
  if (!dialplan) return false;
  const callerId = call.channel?.caller.number || undefined;
  const trimmed = priorityText.trim();
  if (trimmed === '' || /^\d+$/.test(trimmed)) return dialplan.exists(context, exten, trimmed === '' ? 1 : Number(trimmed), callerId);
  return dialplan.findLabel(context, exten, trimmed, callerId) !== undefined;
}

export const stateFunctions: readonly DialplanFunction[] = [
  {
    name: 'DEVICE_STATE',
    syntax: 'DEVICE_STATE(device)',
    summary: 'A device\'s state (NOT_INUSE, INUSE, RINGING, UNAVAILABLE, UNKNOWN...); Custom:name devices are writable, persisted, and raise DeviceStateChanged.',
    category: 'state',
    read: (call) => (call.args.trim() === '' || !call.services ? undefined : call.services.deviceStates.get(call.args.trim()).state),
    write(call, value) {
      if (!call.services) throw new InvalidError('DEVICE_STATE() is not available here');
      const device = call.args.trim();
      if (!DeviceStates.isCustom(device)) throw new InvalidError(`DEVICE_STATE(): only Custom: devices can be set, not ${device.slice(0, 64)}`);
      const state = value.trim().toUpperCase();
      if (!(DEVICE_STATES as readonly string[]).includes(state)) throw new InvalidError(`DEVICE_STATE(): unknown state ${value.slice(0, 32)}`);
      call.services.deviceStates.setCustom(device, state as DeviceStateValue);
    },
  },
  {
    name: 'EXTENSION_STATE',
    syntax: 'EXTENSION_STATE(extension[@context])',
    summary: 'The state of an extension from the devices its hint names (context default: default): NOT_INUSE, INUSE, BUSY, UNAVAILABLE, RINGING, RINGINUSE, ONHOLD, UNKNOWN.',
    category: 'state',
    read(call) {
      if (!call.services) return undefined;
      const { exten, context } = extenAtContext(call.args, 'default');
      if (exten === '') return undefined;
      return call.services.extensionStates.state(exten, context);
    },
  },
  {
    name: 'HINT',
    syntax: 'HINT(extension[@context])',
    summary: 'The device list of an extension\'s hint (context default: the channel\'s).',
    category: 'state',
    read(call) {
      const { exten, context } = extenAtContext(call.args, call.channel?.location.context ?? 'default');
      if (exten === '') return undefined;
      return call.services?.dialplan().hint(context, exten) ?? '';
    },
  },
  {
    name: 'DIALPLAN_EXISTS',
    syntax: 'DIALPLAN_EXISTS(context[,extension[,priority]])',
    summary: '1 when the context (and extension, and priority or label, default 1) exists, else 0.',
    category: 'state',
    read(call) {
      const [context = '', exten, priority = ''] = splitArgs(call.args);
      if (context.trim() === '') return undefined;
      if (exten === undefined) return call.services?.dialplan().hasContext(context.trim()) ? '1' : '0';
      return exists(call, context.trim(), exten.trim(), priority) ? '1' : '0';
    },
  },
  {
    name: 'VALID_EXTEN',
    syntax: 'VALID_EXTEN([context],extension[,priority])',
    summary: '1 when the extension exists at the priority (default 1) in the context (default the channel\'s), else 0.',
    category: 'state',
    read(call) {
      const [context = '', exten = '', priority = ''] = splitArgs(call.args);
      if (exten.trim() === '') return undefined;
      // The priority is a number only (atoi, as func_dialplan reads it): a label reads as 0.
      const number = Number.parseInt(priority.trim(), 10);
      const wanted = priority.trim() === '' ? '1' : String(Number.isNaN(number) ? 0 : number);
      return exists(call, context.trim() || channelOf(call, 'VALID_EXTEN').location.context, exten.trim(), wanted) ? '1' : '0';
    },
  },
];
