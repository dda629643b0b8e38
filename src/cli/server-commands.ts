// The admin commands an Asterisk admin types at `asterisk -r`: `pjsip show …`, `core show …`,
// `core set debug`, `logger rotate` and `sip trace`. ARI has operations for none of them but
// `core show version|uptime` (GET /asterisk/info), so they read the server's `/admin/...` routes
// (src/ops/admin.ts) with the same credentials.
import { adminRequest, CliError, EXIT, type Target } from './client.ts';
import type { AdminValues } from './options.ts';
import { json, str, table, type Row } from './output.ts';
import { cdrCommand } from './cdr-command.ts';

export interface CommandOutput {
  stdout(text: string): void;
}

export type ServerCommand = (target: Target, args: string[], values: AdminValues, out: CommandOutput) => Promise<number>;

/** The words each command takes, for usage lines and the shell's completion. */
export const SERVER_COMMAND_WORDS: Readonly<Record<string, readonly string[][]>> = Object.freeze({
  pjsip: [['show', 'endpoints'], ['show', 'endpoint'], ['show', 'contacts'], ['show', 'registrations'], ['show', 'transports']],
  core: [['show', 'version'], ['show', 'uptime'], ['show', 'channels', 'count'], ['show', 'hanguphandlers'], ['set', 'debug']],
  logger: [['rotate']],
  sip: [['trace', 'on'], ['trace', 'off'], ['trace']],
  cdr: [],
  cluster: [['status']],
});

function usage(command: string): CliError {
  const forms = SERVER_COMMAND_WORDS[command]!.map((words) => `${command} ${words.join(' ')}`);
  return new CliError(`usage: patchbay ${forms.join(' | ')}`, EXIT.usage);
}

/** "1 day, 2 hours, 3 minutes, 4 seconds", as Asterisk's `core show uptime`. */
export function describeSeconds(total: number): string {
  const parts: string[] = [];
  let rest = Math.max(0, Math.floor(total));
  for (const [name, size] of [['week', 604800], ['day', 86400], ['hour', 3600], ['minute', 60]] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n} ${name}${n === 1 ? '' : 's'}`);
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest} second${rest === 1 ? '' : 's'}`);
  return parts.join(', ');
}

const list = (value: unknown): string => (Array.isArray(value) ? value.map(str).join(',') : str(value));

async function pjsip(target: Target, args: string[], values: AdminValues, out: CommandOutput): Promise<number> {
  const [verb, what, id, extra] = args;
  if (verb !== 'show' || what === undefined || extra !== undefined) throw usage('pjsip');
  if (what === 'endpoint') {
    if (id === undefined) throw new CliError('usage: patchbay pjsip show endpoint <id>', EXIT.usage);
    const endpoint = (await adminRequest(target, 'GET', `/pjsip/endpoints/${encodeURIComponent(id)}`, `endpoint ${id}`)) as Row;
    if (values.json) {
    out.stdout(json(endpoint));
    return EXIT.ok;
  }
    const fields: [string, string][] = [
      ['Endpoint', str(endpoint.id)],
      ['State', str(endpoint.state)],
      ['Context', str(endpoint.context)],
      ['Codecs', list(endpoint.codecs)],
      ['DTMF mode', str(endpoint.dtmf_mode)],
      ['Transport', str(endpoint.transport)],
      ['Auth', list(endpoint.auth)],
      ['Outbound auth', list(endpoint.outbound_auth)],
      ['AORs', list(endpoint.aors)],
      ['Identify by', list(endpoint.identify_by)],
    ];
    for (const contact of (endpoint.contacts ?? []) as Row[]) fields.push(['Contact', `${str(contact.aor)}/${str(contact.uri)} ${str(contact.status)}`]);
    for (const channel of (endpoint.channels ?? []) as Row[]) fields.push(['Channel', `${str(channel.name)} ${str(channel.state)}`]);
    const width = Math.max(...fields.map(([k]) => k.length));
    out.stdout(fields.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${v}\n`).join(''));
    return EXIT.ok;
  }
  if (id !== undefined) throw usage('pjsip');
  const views: Record<string, { path: string; headers: string[]; row: (item: Row) => string[]; noun: string }> = {
    endpoints: {
      path: '/pjsip/endpoints',
      headers: ['ENDPOINT', 'STATE', 'CHANNELS', 'CONTACTS', 'CONTEXT', 'AORS', 'AUTH', 'TRANSPORT'],
      row: (e) => [str(e.id), str(e.state), str(e.channels), str(e.contacts), str(e.context), list(e.aors), list(e.auth), str(e.transport)],
      noun: 'endpoints',
    },
    contacts: {
      path: '/pjsip/contacts',
      headers: ['AOR', 'CONTACT', 'STATUS', 'RTT (ms)', 'EXPIRES', 'SOURCE', 'USER AGENT'],
      row: (c) => [str(c.aor), str(c.uri), str(c.status), Number(c.roundtrip_usec) > 0 ? (Number(c.roundtrip_usec) / 1000).toFixed(3) : '', Number(c.expires_in) > 0 ? `${str(c.expires_in)} s` : '', str(c.source), str(c.user_agent)],
      noun: 'contacts',
    },
    registrations: {
      path: '/pjsip/registrations',
      headers: ['REGISTRATION', 'SERVER', 'CLIENT', 'STATUS', 'EXPIRES'],
      row: (r) => [str(r.id), str(r.server_uri), str(r.client_uri), str(r.status), Number(r.expires_in) > 0 ? `${str(r.expires_in)} s` : ''],
      noun: 'registrations',
    },
    transports: {
      path: '/pjsip/transports',
      headers: ['TRANSPORT', 'PROTOCOL', 'BIND', 'EXTERNAL SIGNALING', 'EXTERNAL MEDIA'],
      row: (t) => [str(t.id), str(t.protocol), str(t.bind), str(t.external_signaling_address), str(t.external_media_address)],
      noun: 'transports',
    },
  };
  const view = views[what];
  if (!view) throw usage('pjsip');
  const items = (await adminRequest(target, 'GET', view.path, `pjsip show ${what}`)) as Row[];
  out.stdout(values.json ? json(items) : table(view.headers, items.map(view.row)) + `Objects found: ${items.length} ${view.noun}\n`);
  return EXIT.ok;
}

async function core(target: Target, args: string[], values: AdminValues, out: CommandOutput): Promise<number> {
  const [verb, what, third, extra] = args;
  if (verb === 'set' && what === 'debug') {
    if (third === undefined || extra !== undefined) throw new CliError('usage: patchbay core set debug <0-10|off>', EXIT.usage);
    const answer = (await adminRequest(target, 'PUT', `/core/debug?level=${encodeURIComponent(third)}`, 'core set debug')) as Row;
    out.stdout(values.json ? json(answer) : `log level is now ${str(answer.log_level)}\n`);
    return EXIT.ok;
  }
  if (verb !== 'show' || extra !== undefined) throw usage('core');
  if (what === 'hanguphandlers') return hangupHandlers(target, third, values, out);
  const valid = (what === 'version' || what === 'uptime') ? third === undefined : what === 'channels' && (third === undefined || third === 'count');
  if (!valid) throw usage('core');
  const status = (await adminRequest(target, 'GET', '/core/status', `core show ${what}`)) as Row;
  if (values.json) {
    out.stdout(json(status));
    return EXIT.ok;
  }
  if (what === 'version') out.stdout(`Patchbay ${str(status.version)}\n`);
  else if (what === 'uptime') {
    out.stdout(`System uptime: ${describeSeconds(Number(status.uptime_seconds))}\nLast reload: ${describeSeconds(Number(status.since_reload_seconds))}\n`);
  } else {
    const plural = (n: unknown, word: string): string => `${str(n)} ${word}${Number(n) === 1 ? '' : 's'}`;
    out.stdout(`${plural(status.channels, 'active channel')}\n${plural(status.calls, 'active call')}\n${plural(status.calls_processed, 'call')} processed\n`);
  }
  return EXIT.ok;
}

/** `core show hanguphandlers <channel>|all`, in Asterisk's columns: the channel named on its first handler's line. */
async function hangupHandlers(target: Target, channel: string | undefined, values: AdminValues, out: CommandOutput): Promise<number> {
  if (channel === undefined) throw new CliError('usage: patchbay core show hanguphandlers <channel>|all', EXIT.usage);
  const path = channel === 'all' ? '/core/hanguphandlers' : `/core/hanguphandlers/${encodeURIComponent(channel)}`;
  const channels = (await adminRequest(target, 'GET', path, `channel ${channel}`)) as Row[];
  if (values.json) {
    out.stdout(json(channels));
    return EXIT.ok;
  }
  const line = (first: string, second: string): string => `${first.padEnd(30)} ${second}\n`;
  let text = line('Channel', 'Handler');
  for (const { channel: name, handlers } of channels) {
    (Array.isArray(handlers) ? handlers : []).forEach((handler, index) => (text += line(index === 0 ? str(name) : '', str(handler))));
  }
  out.stdout(text);
  return EXIT.ok;
}

async function logger(target: Target, args: string[], values: AdminValues, out: CommandOutput): Promise<number> {
  if (args.length !== 1 || args[0] !== 'rotate') throw usage('logger');
  const answer = (await adminRequest(target, 'POST', '/logger/rotate', 'logger rotate')) as Row;
  const rotated = Array.isArray(answer.rotated) ? answer.rotated.map(str) : [];
  out.stdout(values.json ? json(answer) : `rotated: ${rotated.join(', ') || '(no log file)'}\n`);
  return EXIT.ok;
}

async function sip(target: Target, args: string[], values: AdminValues, out: CommandOutput): Promise<number> {
  const [verb, state, match, extra] = args;
  if (verb !== 'trace' || extra !== undefined || (state !== undefined && state !== 'on' && state !== 'off') || (state !== 'on' && match !== undefined)) {
    throw new CliError('usage: patchbay sip trace [on [host|user|call-id] | off]', EXIT.usage);
  }
  const query = state === undefined ? '' : `?state=${state}${match !== undefined ? `&match=${encodeURIComponent(match)}` : ''}`;
  const answer = (await adminRequest(target, state === undefined ? 'GET' : 'PUT', `/sip/trace${query}`, 'sip trace')) as Row;
  if (values.json) {
    out.stdout(json(answer));
    return EXIT.ok;
  }
  const on = str(answer.state) === 'on';
  out.stdout(on ? `SIP trace on: ${str(answer.match) ? `calls matching '${str(answer.match)}'` : 'every message'} into the server log\n` : 'SIP trace off\n');
  return EXIT.ok;
}

/** `patchbay cluster status`: the members as the server sees them (docs/cluster.md). */
async function cluster(target: Target, args: string[], values: AdminValues, out: CommandOutput): Promise<number> {
  if (args.length !== 1 || args[0] !== 'status') throw usage('cluster');
  const status = (await adminRequest(target, 'GET', '/cluster', 'cluster status')) as Row;
  if (values.json) {
    out.stdout(json(status));
    return EXIT.ok;
  }
  const members = (Array.isArray(status.members) ? status.members : []) as Row[];
  out.stdout(`Cluster ${str(status.cluster)}, this node ${str(status.node)}; NATS ${status.nats_connected === true ? 'connected' : 'DISCONNECTED'} (${str(status.nats_server)})
`);
  out.stdout(table(
    ['NODE', 'ASTERISK_ID', 'ARI', 'CHANNELS', 'BRIDGES', 'STATE', 'LAST SEEN'],
    members.map((m) => [`${str(m.node)}${m.self === true ? ' *' : ''}`, str(m.asterisk_id), str(m.ari), str(m.channels), str(m.bridges), m.draining === true ? 'draining' : 'up', `${str(m.last_seen_ms)} ms`]),
  ));
  out.stdout(`${members.length} member${members.length === 1 ? '' : 's'}\n`);
  // Shared state (docs/cluster.md): absent from an older member's answer.
  const contacts = (status.contacts ?? {}) as Row;
  const shared = (status.shared_state ?? {}) as Row;
  if (status.contacts !== undefined) out.stdout(`Registrations: ${str(contacts.shared)} shared from here (${str(contacts.withdrawn)} withdrawn), ${str(contacts.known_elsewhere)} known through other members\n`);
  if (status.shared_state !== undefined) out.stdout(`Global variables: ${str(shared.globals_sent)} writes sent, ${str(shared.globals_applied)} applied; astdb: ${str(shared.astdb_sent)} sent, ${str(shared.astdb_applied)} applied\n`);
  if (shared.device_states_sent !== undefined) out.stdout(`Device states: ${str(shared.device_states_sent)} writes sent, ${str(shared.device_states_applied)} applied; dynamic configuration: ${str(shared.config_sent)} sent, ${str(shared.config_applied)} applied\n`);
  const legs = (status.media_legs ?? {}) as Row;
  if (status.media_legs !== undefined) out.stdout(`Bridge legs across members: ${str(legs.held)} held (${str(legs.opened)} opened, ${str(legs.closed)} closed)\n`);
  const relayed = (status.relayed_dialogs ?? {}) as Row;
  if (status.relayed_dialogs !== undefined) out.stdout(`Calls over phones' connections across members: ${str(relayed.lent)} lent from here, ${str(relayed.through_others)} through other members\n`);
  return EXIT.ok;
}

export const SERVER_COMMANDS: Readonly<Record<string, ServerCommand>> = Object.freeze({ pjsip, core, logger, sip, cdr: cdrCommand, cluster });
