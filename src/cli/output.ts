// How the admin CLI prints what ARI answers: aligned tables, JSON, and one readable line per event
// for `patchbay events`. ARI objects arrive as plain JSON, so every field is read defensively:
// a missing or odd field prints as empty, never as an exception.

/** An ARI object as JSON: the CLI reads fields by name and prints what is there. */
export type Row = Record<string, unknown>;

export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd() + '\n';
  return line(headers) + rows.map(line).join('');
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function str(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return String(value);
}

export function count(value: unknown): string {
  return Array.isArray(value) ? String(value.length) : '0';
}

export function caller(channel: Row): string {
  const c = (channel.caller ?? {}) as Row;
  const name = str(c.name);
  const number = str(c.number);
  return name && number ? `"${name}" <${number}>` : name || number;
}

export function location(channel: Row): string {
  const d = (channel.dialplan ?? {}) as Row;
  const app = str(d.app_name);
  return `${str(d.exten)}@${str(d.context)}:${str(d.priority)}${app ? ` ${app}(${str(d.app_data)})` : ''}`;
}

/** The channel snapshots an event carries, under whatever field names them. */
function channelsOf(event: Row): Row[] {
  const out: Row[] = [];
  for (const key of ['channel', 'peer', 'caller', 'replace_channel', 'forwarded']) {
    const value = event[key];
    if (value && typeof value === 'object') out.push(value as Row);
  }
  return out;
}

/** Channel ids an application's event filter keeps following; beyond this the oldest is forgotten. */
const MAX_FOLLOWED_CHANNELS = 10_000;

/**
 * `patchbay events --app X`: an event concerns X when it names a channel that runs `Stasis(X)`, or
 * one seen doing so since (until it is destroyed). A channel's snapshot stops saying Stasis once the
 * application returns (the app before it is restored, as Asterisk's pbx_exec does), so the
 * channel's last events — its ChannelDestroyed among them — are matched by its id.
 */
export class AppEventFilter {
  readonly #followed = new Set<string>();
  constructor(private readonly app: string) {}

  concerns(event: Row): boolean {
    const channels = channelsOf(event);
    let concerned = false;
    for (const channel of channels) {
      const id = str(channel.id);
      if (concernsApp({ channel }, this.app)) {
        concerned = true;
        if (id && !this.#followed.has(id)) this.#follow(id);
      } else if (id && this.#followed.has(id)) concerned = true;
    }
    if (event.type === 'ChannelDestroyed') this.#followed.delete(str((event.channel as Row | undefined)?.id));
    return concerned;
  }

  #follow(id: string): void {
    if (this.#followed.size >= MAX_FOLLOWED_CHANNELS) this.#followed.delete(this.#followed.values().next().value as string);
    this.#followed.add(id);
  }
}

/** Whether the event names a channel that runs `Stasis(app)` (`patchbay events --app`). */
export function concernsApp(event: Row, app: string): boolean {
  return channelsOf(event).some((c) => {
    const d = (c.dialplan ?? {}) as Row;
    return str(d.app_name) === 'Stasis' && str(d.app_data).split(',')[0] === app;
  });
}

/** One readable line: time, type, the channel (name, state) and what else the event names. */
export function formatEvent(event: Row): string {
  const time = str(event.timestamp) || new Date().toISOString();
  const parts = [time, str(event.type).padEnd(22)];
  const channel = event.channel as Row | undefined;
  if (channel) parts.push(`${str(channel.name)} (${str(channel.state)})`);
  const peer = event.peer as Row | undefined;
  if (peer) parts.push(`peer ${str(peer.name)}`);
  const bridge = event.bridge as Row | undefined;
  if (bridge) parts.push(`bridge ${str(bridge.id)}`);
  const extra: [string, unknown][] = [
    ['digit', event.digit],
    ['cause', event.cause_txt ?? event.cause],
    ['dialstatus', event.dialstatus],
    ['app', event.dialplan_app === undefined ? undefined : `${str(event.dialplan_app)}(${str(event.dialplan_app_data)})`],
    ['variable', event.variable],
    ['value', event.value],
  ];
  for (const [k, v] of extra) if (v !== undefined && v !== null && v !== '') parts.push(`${k}=${str(v)}`);
  const playback = event.playback as Row | undefined;
  if (playback) parts.push(`playback ${str(playback.media_uri)} ${str(playback.state)}`);
  const recording = event.recording as Row | undefined;
  if (recording) parts.push(`recording ${str(recording.name)} ${str(recording.state)}`);
  const device = event.device_state as Row | undefined;
  if (device) parts.push(`device ${str(device.name)} ${str(device.state)}`);
  const endpoint = event.endpoint as Row | undefined;
  if (endpoint) parts.push(`endpoint ${str(endpoint.technology)}/${str(endpoint.resource)} ${str(endpoint.state)}`);
  return `${parts.join(' ').trimEnd()}\n`;
}
