// chan_websocket's control protocol: TEXT frames between the application and the channel, in
// plain text (`COMMAND[ <argument>]`, events as `EVENT key:value ...`) or JSON (`{"command": ...}`,
// events as compact objects starting with `event` and `channel_id`), per channel.
import type { ControlFormat } from './dial-string.ts';
import { parseJsonObjectText } from '../../util/json-object.ts';

/** Longer TEXT frames are ignored (Asterisk's limit, also for pretty-printed JSON). */
export const MAX_COMMAND_BYTES = 128;

export const COMMANDS = [
  'ANSWER',
  'HANGUP',
  'START_MEDIA_BUFFERING',
  'STOP_MEDIA_BUFFERING',
  'MARK_MEDIA',
  'FLUSH_MEDIA',
  'REPORT_QUEUE_DRAINED',
  'GET_STATUS',
  'PAUSE_MEDIA',
  'CONTINUE_MEDIA',
  'SET_MEDIA_DIRECTION',
] as const;

export type CommandName = (typeof COMMANDS)[number];

const COMMAND_SET: ReadonlySet<string> = new Set(COMMANDS);

export type ParsedCommand =
  | { readonly kind: 'command'; readonly command: CommandName; readonly correlationId: string; readonly direction: unknown; readonly json: boolean }
  | { readonly kind: 'unknown'; readonly name: string }
  | { readonly kind: 'unparsable' };

/** Reads one TEXT frame (already bounded and trimmed by the caller) in `format`. */
export function parseCommand(text: string, format: ControlFormat): ParsedCommand {
  if (format === 'json') {
    const fields = parseJsonObjectText(text);
    if (typeof fields === 'string') return { kind: 'unparsable' };
    const name = Object.hasOwn(fields, 'command') && typeof fields.command === 'string' ? fields.command : '';
    if (!COMMAND_SET.has(name)) return { kind: 'unknown', name };
    const correlation = Object.hasOwn(fields, 'correlation_id') ? fields.correlation_id : undefined;
    return {
      kind: 'command',
      command: name as CommandName,
      correlationId: typeof correlation === 'string' ? correlation : typeof correlation === 'number' ? String(correlation) : '',
      direction: Object.hasOwn(fields, 'direction') ? fields.direction : undefined,
      json: true,
    };
  }
  const space = text.indexOf(' ');
  const name = space < 0 ? text : text.slice(0, space);
  const argument = space < 0 ? '' : text.slice(space + 1).trim();
  if (!COMMAND_SET.has(name)) return { kind: 'unknown', name };
  return { kind: 'command', command: name as CommandName, correlationId: argument, direction: undefined, json: false };
}

/** A JSON event: a compact object with `event` and `channel_id` first, then the event's fields. */
export function jsonEvent(event: string, channelId: string, fields: Readonly<Record<string, unknown>> = {}): string {
  return JSON.stringify({ event, channel_id: channelId, ...fields });
}
