// The WebSocket connections Patchbay makes itself: `websocket_clients` (Asterisk's
// websocket_client.conf objects, used by chan_websocket and externalMedia) and ARI's
// `ari.outbound_websockets` (ari.conf `type=outbound_websocket`), with the check that ties an
// outbound connection to its client and user. Declared apart from settings.ts as the records and
// cluster sections are; settings.ts places them.
import type { WebSocketClientConfig as ConnectionFields } from '../util/websocket-clients/client-config.ts';
import type { AriUser } from './ari-users.ts';
import { RESERVED_NAMES } from './config-objects.ts';
import { boolean, filePath, integer, oneOf, section, string, stringList, type Raw, type ReadContext, type ValueOf } from './schema.ts';
import { checkHostPort, noControl } from './value-checks.ts';

const INT32_MAX = 2 ** 31 - 1;

/** A WebSocket server Patchbay connects to, by name (Asterisk's websocket_client.conf objects). */
export const WEBSOCKET_CLIENT = section({
  name: string({
    required: true,
    docDefault: '(required)',
    doc: 'Name the client is used by (chan_websocket dial strings `WebSocket/<name>`, externalMedia `external_host`); unique; letters, digits, `_`, `-`, `.`',
    check: (s) => (/^[A-Za-z0-9_.-]{1,64}$/.test(s) && !RESERVED_NAMES.has(s) && s !== 'INCOMING' ? null : `must be 1–64 letters, digits, _, - or . (and not INCOMING), got '${s}'`),
  }),
  uri: string({
    required: true,
    docDefault: '(required)',
    doc: '`ws://` or `wss://host[:port][/path][?query]` (ports 80/443 by default); no user info',
    check: checkWebSocketUri,
  }),
  connection_type: oneOf({
    values: ['per_call_config', 'persistent'],
    default: 'per_call_config',
    docDefault: '`per_call_config`',
    doc: "As Asterisk's websocket_client `connection_type`: media channels always open one connection per call",
  }),
  protocols: string({ default: '', docDefault: 'none', doc: 'Comma-separated, sent as `Sec-WebSocket-Protocol` (e.g. `media`); the server may pick one of them or none', check: (s) => (/^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/.test(s) || s === '' ? null : 'must be a comma-separated list of protocol tokens') }),
  username: string({ default: '', docDefault: 'none', doc: 'With `password`: HTTP Basic credentials sent in the handshake', check: (s) => (s.includes(':') ? "must not contain ':'" : noControl(s)) }),
  password: string({ default: '', docDefault: 'none', doc: 'Password for `username`', check: noControl }),
  connection_timeout: integer({ default: 500, min: 1, max: 60_000, doc: 'Milliseconds; one attempt (connecting, TLS and the HTTP handshake) may take twice this, as in Asterisk 22.11/23.5' }),
  reconnect_interval: integer({ default: 500, min: 0, max: 60_000, doc: 'Milliseconds between attempts' }),
  reconnect_attempts: integer({ default: 4, min: 1, max: 100, doc: 'Attempts before a call gives up (hangup cause 3)' }),
  tls_enabled: boolean({ default: false, doc: 'Use TLS even with a `ws://` URI (a `wss://` URI always uses TLS)' }),
  ca_list_file: filePath({ default: null, docDefault: 'the system CAs', doc: 'PEM file of the CAs that may sign the server certificate' }),
  cert_file: filePath({ default: null, docDefault: 'none', doc: 'PEM client certificate' }),
  priv_key_file: filePath({ default: null, docDefault: 'none', doc: 'PEM private key of `cert_file`' }),
  verify_server_cert: boolean({ default: true, doc: 'Refuse a server certificate no trusted CA signed' }),
  verify_server_hostname: boolean({ default: true, doc: 'Refuse a server certificate for another host name' }),
  // Used by every client connection (src/util/websocket-clients/connect.ts).
  ca_list_path: filePath({ default: null, docDefault: 'none', doc: 'Directory of PEM CA files (`*.pem`, `*.crt`) trusted for the server certificate' }),
  proxy_host: string({ default: '', docDefault: 'none', doc: 'HTTP proxy `host:port` to tunnel through with `CONNECT` (plain text to the proxy; TLS to the server runs inside the tunnel)', check: (s) => (s === '' ? null : checkHostPort(s)) }),
  proxy_username: string({ default: '', docDefault: 'none', doc: 'Sent to the proxy as `Proxy-Authorization: Basic` (with `proxy_password`)', check: noControl }),
  proxy_password: string({ default: '', docDefault: 'none', doc: 'Password for `proxy_username`', check: noControl }),
  enable_tcp_keepalives: boolean({ default: false, doc: 'Turn on TCP keepalives on the connection' }),
  tcp_keepalive_time: integer({ default: 20, min: 1, max: 86400, doc: 'Seconds of idleness before the first TCP keepalive probe' }),
  tcp_keepalive_interval: integer({ default: 20, min: 1, max: 86400, doc: 'Accepted for compatibility; Node.js leaves the interval between probes to the operating system' }),
  tcp_keepalive_probes: integer({ default: 3, min: 1, max: 1000, doc: 'Accepted for compatibility; Node.js leaves the probe count to the operating system' }),
  enable_pingpongs: boolean({ default: false, doc: 'Send a WebSocket PING every `pingpong_interval`; after `pingpong_probes` unanswered ones the connection is dropped and re-established' }),
  pingpong_interval: integer({ default: 20, min: 1, max: 86400, doc: 'Seconds between PINGs' }),
  pingpong_probes: integer({ default: 3, min: 1, max: 1000, doc: 'Unanswered PINGs before the connection counts as dead' }),
});

/** Compiles only when the schema gives the connecting code (src/util/websocket-clients) every field it reads. */
type ProvidesConnectionFields<T extends ConnectionFields> = T;
export type WebSocketClientConfig = ProvidesConnectionFields<ValueOf<typeof WEBSOCKET_CLIENT>>;
/** The same type under the name the outbound WebSocket code uses. */
export type WebSocketClientSettings = WebSocketClientConfig;

function checkWebSocketUri(s: string): string | null {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return `must be a ws:// or wss:// URI, got '${s}'`;
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') return `must start with ws:// or wss://, got '${s}'`;
  if (url.username || url.password) return 'must not carry user info; set username and password';
  if (url.hash) return 'must not have a fragment';
  return null;
}

const CONFIG_ID = (what: string): ReturnType<typeof string> =>
  string({
    required: true,
    docDefault: '(required)',
    doc: `Name of the ${what} (unique)`,
    check: (s) => (s.trim() === '' ? 'must not be empty' : s.length > 128 ? 'must be at most 128 characters' : noControl(s)),
  });

/** An ARI outbound WebSocket (Asterisk's ari.conf `type=outbound_websocket`): the server connects to the application. */
export const OUTBOUND_WEBSOCKET = section({
  name: CONFIG_ID('connection (the section name in ari.conf); also the session id of a persistent connection'),
  websocket_client_id: string({ required: true, docDefault: '(required)', doc: 'The `name` of a `websocket_clients` entry' }),
  apps: stringList({
    default: [],
    comma: true,
    docDefault: '(required)',
    doc: 'Stasis applications served over the connection: a list or a comma-separated string, each 1–73 characters',
    check: (s) => (s.length > 73 ? 'must be at most 73 characters' : /[,\x00-\x1f\x7f]/.test(s) ? 'must not contain commas or control characters' : null),
  }),
  local_ari_user: string({ required: true, docDefault: '(required)', doc: 'The `ari.users` entry whose rights govern REST requests arriving over the connection (`read_only` limits them to GET)' }),
  subscribe_all: boolean({ default: false, doc: 'The applications receive every event, as `subscribeAll=true` on `/ari/events`' }),
  connection_type: oneOf({
    values: ['', 'persistent', 'per_call_config'],
    default: '',
    docDefault: "the client's",
    doc: "Overrides the websocket client's `connection_type` (Patchbay extension)",
  }),
  queue_max_bytes: integer({
    default: 16 * 1024 * 1024,
    min: 64 * 1024,
    max: INT32_MAX,
    docDefault: '`16777216` (16 MiB)',
    doc: 'Bytes of messages kept while a persistent connection is down (or the application reads too slowly); beyond it the oldest are dropped. Asterisk keeps them without limit',
  }),
  queue_max_age_seconds: integer({
    default: 300,
    min: 1,
    max: 86400,
    doc: 'Messages older than this are dropped from the queue of a connection that is down instead of being sent on reconnect',
  }),
});

export type OutboundWebSocketSettings = ValueOf<typeof OUTBOUND_WEBSOCKET>;

/** Each outbound WebSocket names an existing client and user, and has a connection type. */
export function checkOutboundWebSockets(top: Raw, ctx: ReadContext): void {
  const users = (top.ari as { users: readonly AriUser[] }).users;
  const clients = top.websocketClients as readonly WebSocketClientSettings[];
  const outbound = (top.ari as { outboundWebsockets: readonly OutboundWebSocketSettings[] }).outboundWebsockets;
  outbound.forEach((item, i) => {
    const p = ['ari', 'outbound_websockets', i];
    const client = clients.find((c) => c.name === item.websocketClientId);
    if (!client) ctx.fail([...p, 'websocket_client_id'], `no websocket_clients entry is named '${item.websocketClientId}'`);
    if (!users.some((u) => u.name === item.localAriUser)) ctx.fail([...p, 'local_ari_user'], `no ari.users entry is named '${item.localAriUser}'`);
  });
}
