// Every setting, declared once. The YAML key is the field name here; the loaded PatchbayConfig field
// is its camelCase (`body_limit_bytes` → `bodyLimitBytes`). Each declaration gives the type, the
// default, the validation, the environment variable and the row of the Settings table in
// docs/configuration.md (regenerate it with `npm run docs:config`; a test fails when it drifts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkUserAcls, DEFAULT_USER, readNamedAcls, usesDefaultPassword, USER, type AriUser, type NamedAcl, NAMED_ACL } from './ari-users.ts';
import { readConfigObjects, type ConfigObjects } from './config-objects.ts';
import { openFileLimit } from '../util/resource-limits.ts';
import { CDR_SETTINGS, CEL_SETTINGS } from './records-settings.ts';
import { CLUSTER_SETTINGS } from './cluster-settings.ts';
import {
  boolean,
  custom,
  decimal,
  describe,
  filePath,
  integer,
  isPlainObject,
  notEmptyPath,
  oneOf,
  recordList,
  section,
  string,
  stringList,
  type Raw,
  type ReadContext,
  type Seg,
  type YamlOf,
} from './schema.ts';
import { defaultServerId, SERVER_ID_RE } from './server-id.ts';
import { checkOutboundWebSockets, OUTBOUND_WEBSOCKET, WEBSOCKET_CLIENT } from './websocket-client-settings.ts';
import { checkBind, checkOrigin, isLoopback, noControl } from './value-checks.ts';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
/** Where Asterisk's prompts are installed: by distribution packages, and by Asterisk's own `make install`. */
const DEFAULT_SYSTEM_SOUNDS = ['/usr/share/asterisk/sounds', '/var/lib/asterisk/sounds'];
const INT32_MAX = 2 ** 31 - 1;

export type { OutboundWebSocketSettings, WebSocketClientConfig, WebSocketClientSettings } from './websocket-client-settings.ts';

export const SETTINGS = section(
  {
    server_id: custom<string, string>({
      docDefault: 'MAC of the first non-internal network interface, else a generated id stored in `<data>/server-id`',
      doc: 'Entity id `xx:xx:xx:xx:xx:xx` (stored lower-case), reported as `asterisk_id` / `entity_id`',
      late: true,
      read: (v: unknown, p: readonly Seg[], ctx: ReadContext, top: Raw) => {
        if (v === undefined || v === null) return defaultServerId((top.dirs as { data: string }).data, ctx);
        if (typeof v !== 'string') ctx.fail(p, `must be a string, got ${describe(v)}`);
        if (!SERVER_ID_RE.test(v)) ctx.fail(p, `must look like a MAC address xx:xx:xx:xx:xx:xx (hex), got '${v}'`);
        return v.toLowerCase();
      },
    }),
    system_name: string({
      default: () => os.hostname() || 'patchbay',
      docDefault: 'the host name',
      doc: 'System name in system information',
      check: (s) => (s.trim() === '' ? 'must not be empty' : noControl(s)),
    }),
    http: section({
      bind: string({
        default: '127.0.0.1',
        env: 'PATCHBAY_HTTP_BIND',
        doc: 'Listen address: an IP (IPv6 without brackets) or a host name',
        check: checkBind,
      }),
      port: integer({ default: 8088, min: 0, max: 65535, env: 'PATCHBAY_HTTP_PORT', doc: 'Listen port, 0–65535; `0` picks a free port' }),
      body_limit_bytes: integer({
        default: 1024 * 1024,
        min: 1,
        max: 1024 * 1024 * 1024,
        docDefault: '`1048576` (1 MiB)',
        doc: 'Largest request body accepted; larger bodies get 413',
      }),
      console: boolean({
        default: true,
        doc: 'Serve the web console at `/console` (static files without secrets; it logs in with ARI users, see docs/console.md). `false` answers 404 there',
      }),
      prefix: string({
        default: '',
        docDefault: "`''` (none)",
        doc: "URL prefix before `/ari`, `/metrics` and `/health`, as http.conf's `prefix`: with `asterisk`, ARI is at `/asterisk/ari`. Letters, digits, `_`, `-`, `.` and inner `/`",
        check: (s) => {
          const bare = s.replace(/^\/+|\/+$/g, '');
          return bare === '' || (/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(bare) && !bare.split('/').some((part) => part === '.' || part === '..'))
            ? null
            : `must be path segments of letters, digits, _, - and ., got '${s}'`;
        },
      }),
    }),
    http_connections: section({
      max: integer({ default: () => defaultMaxHttpConnections(), min: 1, max: 1_000_000, docDefault: 'a quarter of the open-file limit, at most 4096', doc: 'HTTP connections at once, all clients together. At the limit a new connection takes the place of the oldest one that never authenticated; when all are authenticated it is closed at once. Keeps idle sockets from using up the file descriptors that calls, recordings and logs need' }),
      max_per_address: integer({ default: 256, min: 1, max: 1_000_000, doc: 'HTTP connections at once from one client address (one /64 for IPv6); more are closed at once' }),
      header_timeout_ms: integer({ default: 10_000, min: 100, max: 300_000, doc: 'Milliseconds a new HTTP connection has to send its first request header before it is closed (Node.js allows a minute)' }),
    }),
    ari: section({
      acls: custom<ReadonlyMap<string, NamedAcl>, Record<string, YamlOf<typeof NAMED_ACL>>>({
        docDefault: '`{}`',
        doc: "Named ACLs (Asterisk's acl.conf): a mapping of names to `permit`/`deny` lists, referenced by `ari.users[].acl`. See [ARI user ACLs](#ari-user-acls)",
        read: readNamedAcls,
      }),
      users: recordList(USER, {
        what: 'users',
        itemWhat: 'a mapping with name and password',
        default: [DEFAULT_USER],
        docDefault: 'one user `asterisk` / `asterisk`, plain, read-write',
        doc: 'List of ARI users (an empty list means nobody can log in)',
        check: (user, _i, before, p, ctx) => {
          if (before.some((u) => u.name === user.name)) ctx.fail([...p, 'name'], `duplicate user '${user.name}'`);
        },
      }),
      auth_realm: string({
        default: 'Asterisk REST Interface',
        doc: 'Realm in `WWW-Authenticate` (no quotes or control characters)',
        check: (s) => (s.trim() === '' ? 'must not be empty' : /["\\\x00-\x1f\x7f]/.test(s) ? 'must not contain quotes, backslashes or control characters' : null),
      }),
      channelvars: stringList({
        default: [],
        comma: true,
        doc: 'Channel variables included in channel snapshots; an entry with parentheses (`CHANNEL(language)`) is a dialplan function read for each snapshot. Give a list or a comma-separated string',
        check: (s) => (/[\s\x00-\x1f\x7f]/.test(s) ? 'must not contain whitespace or control characters' : null),
      }),
      allowed_origins: stringList({
        default: [],
        comma: true,
        doc: 'CORS origins: `scheme://host[:port]` (no path, no trailing slash) or `*`. Give a list or a comma-separated string',
        check: checkOrigin,
        map: (s) => (s === '*' ? s : s.toLowerCase()),
      }),
      pretty: boolean({ default: false, doc: 'Pretty-print JSON responses' }),
      developer_mode: boolean({
        default: false,
        doc: 'Developer-only checks: every response and event is checked against its declared model, and a status the operation does not declare becomes a 500 (see [Error statuses](errors.md))',
      }),
      websocket: section({
        ping_interval_seconds: integer({ default: 30, min: 0, max: 86400, doc: 'WebSocket ping interval, 0–86400; `0` turns pings off' }),
        max_queued_messages: integer({
          default: 50_000,
          min: 1,
          max: 10_000_000,
          doc: 'Messages a socket has not taken (written to the kernel) after a flush before it counts as too slow and is closed',
        }),
        max_queued_bytes: integer({
          default: 16 * 1024 * 1024,
          min: 64 * 1024,
          max: INT32_MAX,
          doc: 'Bytes a socket has not taken before it counts as too slow and is closed, 65536–2³¹−1: the most memory one event consumer can cost. A reader that keeps up is never cut off by a burst: only what is still untaken once the burst has been handed to the kernel counts',
        }),
      }),
      event_log: section({
        max_events: integer({
          default: 10_000,
          min: 1,
          max: 10_000_000,
          doc: 'Events kept per application for clients that resume (`resumeAfter`, see [Resuming the event stream](events-resume.md)); the oldest go first',
        }),
        max_bytes: integer({
          default: 8 * 1024 * 1024,
          min: 64 * 1024,
          max: INT32_MAX,
          docDefault: '`8388608` (8 MiB)',
          doc: 'Bytes of events (as sent) kept per application, 65536–2³¹−1',
        }),
        max_total_bytes: integer({
          default: 256 * 1024 * 1024,
          min: 64 * 1024,
          max: Number.MAX_SAFE_INTEGER,
          docDefault: '`268435456` (256 MiB)',
          doc: 'Bytes of events kept for all applications together: past it, the oldest events of the applications that hold the most go first',
        }),
        max_age_seconds: integer({ default: 600, min: 1, max: 7 * 86400, doc: 'Seconds an event is kept for resuming clients, 1–604800' }),
        max_applications: integer({
          default: 1000,
          min: 1,
          max: 1_000_000,
          doc: 'Applications whose events are kept at once; beyond it the log of the application that raised nothing for the longest and has no connection is dropped (when every application has a connection, the events of the idlest are dropped and its numbering is kept)',
        }),
        persist: boolean({
          default: false,
          doc: 'Also write the kept events to `<data>/patchbay.sqlite` (within the event-loop turn that raised them), so that a client resumes across a server restart',
        }),
        reconnect_grace_seconds: integer({
          default: 60,
          min: 0,
          max: 86400,
          doc: 'How long calls wait for an application whose resumable connection (`resumeAfter`, `ack` or `resumable` on `/ari/events`) dropped: channels sent to it meanwhile wait instead of being hung up, and get StasisStart once it is back. `0` = no wait',
        }),
        waiting_indication: oneOf({
          values: ['ringing', 'none'],
          default: 'ringing',
          docDefault: '`ringing`',
          doc: 'What an unanswered channel waiting for a disconnected application hears: `ringing` or `none`',
        }),
      }),
      outbound_websockets: recordList(OUTBOUND_WEBSOCKET, {
        what: 'outbound WebSockets',
        itemWhat: 'a mapping with name, websocket_client_id, apps and local_ari_user',
        default: [],
        docDefault: 'none',
        doc: 'ARI outbound WebSockets: the server connects to the application (see [Outbound WebSockets](outbound-websockets.md)). A reload (SIGHUP, or of `res_ari.so` / `res_websocket_client.so`) applies changes to running connections',
        check: (item, _i, before, p, ctx) => {
          if (before.some((other) => other.name === item.name)) ctx.fail([...p, 'name'], `duplicate outbound WebSocket '${item.name}'`);
          if (item.apps.length === 0) ctx.fail([...p, 'apps'], 'must name at least one application');
          for (const other of before) {
            const shared = item.apps.find((app) => other.apps.includes(app));
            if (shared !== undefined) ctx.fail([...p, 'apps'], `application '${shared}' is already served by outbound WebSocket '${other.name}'`);
          }
        },
      }),
      max_subscribe_all_apps: integer({ default: 100, min: 0, max: 1_000_000, doc: 'Most applications that receive every event at once: connected with `subscribeAll=true`, or subscribed to every channel, bridge or endpoint (`channel:`, `bridge:`, `endpoint:` with no id). Each such application gets a copy of each event, so 8,000 of them turned one call into 136,000 messages; beyond the limit the events WebSocket upgrade and the subscription answer 503. Outbound WebSockets count but are never refused (they are configured). `0` = unlimited' }),
      crypt_checks_per_second: integer({ default: 20, min: 0, max: 1_000_000, doc: 'Crypt password checks the whole server starts per second, from all addresses together (in bursts of as many); beyond, a login that needs one is answered 401 without a check. Credentials verified before need none. `0` = no limit (see [Failed logins](#failed-logins))' }),
      failed_logins: section({
        max_per_address: integer({ default: 10, min: 0, max: 1_000_000, doc: 'Failed logins one client address may make in a window before it is refused without any check (see [Failed logins](#failed-logins)); `0` = no limit' }),
        window_seconds: integer({ default: 60, min: 1, max: 86400, doc: 'Window the failed logins are counted in, 1–86400' }),
        block_seconds: integer({ default: 60, min: 1, max: 86400, doc: 'How long an address that reached the limit is refused, 1–86400' }),
        tracked_addresses: integer({
          default: 10_000,
          min: 1,
          max: 10_000_000,
          doc: 'Addresses remembered at once; when more fail, the one that failed least recently is forgotten',
        }),
      }),
    }, checkUserAcls),
    dirs: section({
      data: filePath({ default: './data', env: 'PATCHBAY_DATA_DIR', doc: 'Data directory' }),
      logs: filePath({ default: (d) => path.join(d.data as string, 'logs'), docDefault: '`<data>/logs`', doc: 'Log directory' }),
      recordings: filePath({
        default: (d) => path.join(d.data as string, 'recordings'),
        docDefault: '`<data>/recordings`',
        doc: 'Recordings directory',
      }),
      sounds: stringList({
        default: (d) => [path.join(d.data as string, 'sounds'), ...DEFAULT_SYSTEM_SOUNDS],
        docDefault: '`[<data>/sounds, /usr/share/asterisk/sounds, /var/lib/asterisk/sounds]`',
        comma: false,
        check: notEmptyPath,
        map: (s, ctx) => path.resolve(ctx.baseDir, s),
        doc: "Sound directories, searched in order (distribution packages install Asterisk's prompts under `/usr/share`, Asterisk's own `make install` under `/var/lib`). Give a list or one path. A sound id names a file inside them: an absolute `sound:` path is played only when it lies inside one of them, and a symbolic link is followed only when its target does. The prompts Patchbay generates at first start (a beep, silences, call-progress tones, in `<data>/generated/sounds`) are fallbacks, used only for names no sound directory has",
      }),
      moh: filePath({ default: (d) => path.join(d.data as string, 'moh'), docDefault: '`<data>/moh`', doc: 'Music-on-hold directory. A file plays only when its real path (links resolved) lies inside it or a `moh_classes` directory' }),
    }),
    dialplan: section({
      file: filePath({
        default: null,
        docDefault: '`null` (the embedded default dialplan)',
        doc: 'Dialplan file. It must exist when set',
        check: (file: string, p: readonly Seg[], ctx: ReadContext) => {
          let st: fs.Stats | undefined;
          try {
            st = fs.statSync(file);
          } catch (err) {
            ctx.fail(p, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
          }
          if (!st.isFile()) ctx.fail(p, `${file} is not a regular file`);
        },
      }),
    }),
    logging: section({
      level: oneOf({ values: LOG_LEVELS, default: 'info', doc: '`trace`, `debug`, `info`, `warn`, `error` or `fatal`' }),
      console: boolean({ default: true, doc: '`true`: the log goes to stdout. `false`: JSON lines appended to `<logs>/patchbay.log` (see [Where the log goes](#where-the-log-goes))' }),
      format: oneOf({
        values: ['auto', 'pretty', 'json'],
        default: 'auto',
        doc: 'Console log format: `pretty` (readable lines), `json` (JSON lines) or `auto` (pretty when stdout is a terminal, else JSON)',
        docDefault: '`auto`',
      }),
      max_log_channels: integer({
        default: 64,
        min: 2,
        max: 100_000,
        doc: 'Most log channels at once (2–100000), counting the console and `messages.log`; ARI `addLog` beyond it answers 409 (see [Log channels](#log-channels))',
      }),
    }),
    console: section({
      sip_ladder_messages: integer({ default: 64, min: 0, max: 1000, doc: 'SIP messages the web console\'s ladder keeps per dialog (its last ones); `0` turns the ladder off (see docs/console.md)' }),
      sip_ladder_dialogs: integer({ default: 500, min: 1, max: 100_000, doc: 'Dialogs (Call-IDs) the ladder keeps, live and ended; the oldest goes first. 8 MiB of message text at most in all' }),
      sip_ladder_max_call_rate: integer({ default: 20, min: 0, max: 100_000, doc: 'New dialogs per second (over 10 s) above which the ladder takes no new dialogs, so that a busy server does not copy every message; `0`: none' }),
      sip_ladder_stored_calls: integer({ default: 200, min: 0, max: 100_000, doc: 'Ladders of ended SIP calls kept in the database (`sip_ladder_dialog` table), newest first, so History shows them after a restart; `0`: none kept' }),
      sip_ladder_stored_bytes: integer({ default: 16 * 1024 * 1024, min: 0, max: 1024 * 1024 * 1024, doc: 'Bytes of message text the stored ladders may take in all; the oldest go first' }),
    }),
    metrics: section({
      require_auth: custom<boolean | 'auto', boolean | 'auto'>({
        docDefault: '`auto`',
        doc: 'Whether `GET /metrics` needs ARI credentials: `auto` (only when `http.bind` is not loopback), `true` or `false`; `false` is refused off loopback',
        read: (v, p, ctx) => {
          if (v === undefined || v === null || v === 'auto') return 'auto';
          if (typeof v === 'boolean') return v;
          return ctx.fail(p, `must be auto, true or false, got ${describe(v)}`);
        },
      }),
    }),
    language: string({
      default: 'en',
      doc: 'Default channel language (letters, digits, `_`, `-`; e.g. `en_GB`)',
      check: (s) => (/^[A-Za-z0-9_-]{1,32}$/.test(s) ? null : `must be a language code such as en or en_GB (letters, digits, _ and -), got '${s}'`),
    }),
    media: section({
      workers: integer({ default: () => Math.max(1, os.availableParallelism()), docDefault: 'the number of CPU cores', min: 0, max: 256, env: 'PATCHBAY_MEDIA_WORKERS', doc: "Worker threads that run the RTP of plain-RTP SIP calls (sockets, strict RTP, jitter buffers, codecs, RTCP, DTMF), each call on the least-loaded one, so media uses the other cores while the main thread keeps signalling, dialplan, ARI and events (see [media workers](media.md#media-workers)). `0` = all media on the main thread. SDES-SRTP and WebRTC calls run there too (their keys, and a WebRTC call's DTLS records, cross as messages)" }),
      worker_relay: boolean({ default: true, doc: 'Two SIP calls connected with nothing else taking their audio (a `Dial()` pair, a two-party bridge) whose streams share a media worker pass their audio inside it, and the main thread does nothing per frame (see [media workers](media.md#media-workers)); `false` keeps every frame going through the main thread' }),
      worker_mix: boolean({ default: true, doc: 'A mixing bridge of three or more SIP calls whose streams run in media workers, with nothing else taking their audio, is mixed in the worker holding most of them (members of other workers cross through shared memory), and the main thread does nothing per frame (see [media workers](media.md#media-workers), worker mix); `false` mixes every such bridge on the main thread' }),
      worker_recording: boolean({ default: true, doc: 'A recording of a SIP call\'s received audio (ARI `record` on a channel, the dialplan\'s `Record()`) whose stream runs in a media worker, with nothing else taking the call\'s audio, is written into its file by the worker, and the main thread does nothing per frame (see [media workers](media.md#media-workers), recording fast path); `false` writes every recording on the main thread' }),
      worker_playback: boolean({ default: true, doc: 'A sound file played to a SIP call whose stream runs in a media worker, with nothing else taking the call\'s audio, is sent by the worker from a shared copy of the decoded file, and the main thread does nothing per frame (see [media workers](media.md#media-workers), playback fast path); `false` makes every playback frame on the main thread' }),
      worker_opus: boolean({ default: true, doc: 'A SIP call that may agree on Opus runs its stream in a media worker like any plain-RTP call, coded there by libopus\'s WebAssembly build (about 1.6 times the CPU of the native addon the main thread uses, which is not safe to share between threads: see [media workers](media.md#media-workers)); `false` keeps such calls on the main thread. A call whose endpoint allows Opus but whose offer does not list it goes to a worker either way' }),
    }),
    sip: section({
      enabled: boolean({ default: true, doc: 'Run the SIP channel technology (`PJSIP`, `chan_pjsip.so`); `false` starts the server without it (no SIP listener, no media workers), as modules.conf `noload => chan_pjsip.so`, and `module load chan_pjsip.so` still starts it' }),
      bind: string({
        default: '',
        docDefault: 'the HTTP bind address',
        doc: 'Address the SIP transports (UDP and TCP) listen on; not used when `res_pjsip` transports are configured (pjsip.conf, `config_objects`): each listens at its `bind`',
        check: (s) => (s === '' ? null : checkBind(s)),
      }),
      port: integer({ default: 5060, min: 0, max: 65535, env: 'PATCHBAY_SIP_PORT', doc: 'SIP port for UDP and TCP, 0–65535; `0` picks a free port; not used when `res_pjsip` transports are configured' }),
      external_address: string({
        default: '',
        docDefault: 'none',
        doc: 'Address written in Contact, Via and SDP instead of the bind address (NAT); `external_signaling_address` / `external_media_address` of a pjsip.conf transport override it',
        check: noControl,
      }),
      auth_algorithms: stringList({
        default: ['MD5'],
        comma: true,
        docDefault: '`[MD5]`',
        doc: "Digest algorithms offered in challenges, in order (`MD5`, `SHA-256`). MD5 alone by default, as Asterisk: many phones answer only the first challenge or give up on one they do not know",
        check: (s) => (s === 'MD5' || s === 'SHA-256' ? null : `must be MD5 or SHA-256, got '${s}'`),
      }),
      rtp_unanswered_ms: integer({ default: 10_000, min: 0, max: 3_600_000, doc: "When a call's SDP sends our RTP to another address than the one its signalling is with, RTP goes there for at most this many ms before anything (RTP or RTCP) comes back from it; then sending waits for the far end's first packet. An SDP cannot aim the server's media at a third party for longer; `0` = no limit" }),
      max_calls_per_endpoint: integer({ default: 100, min: 0, max: 1_000_000, doc: "Live SIP calls one endpoint may have; more INVITEs get 486 Busy Here. Every unauthenticated caller shares one endpoint (`anonymous`), so this keeps them from taking the whole RTP port range; `0` = no limit" }),
      tcp: section({
        max_connections: integer({ default: 1024, min: 1, max: 1_000_000, doc: 'SIP TCP connections at once per listener, in and out. At the limit a new incoming one takes the place of the oldest incoming one that has not sent a whole SIP message; with none, it is refused' }),
        max_connections_per_source: integer({ default: 32, min: 1, max: 1_000_000, doc: 'Incoming SIP TCP connections at once from one address, so that one host cannot lock every other TCP client out' }),
        idle_timeout_seconds: integer({ default: 120, min: 1, max: 86400, doc: 'A SIP TCP connection that carries nothing for this long is closed' }),
        first_message_timeout_seconds: integer({ default: 10, min: 1, max: 3600, doc: 'An incoming SIP TCP connection that has not sent a whole SIP message in this time is closed' }),
      }),
      failed_auth: section({
        max_per_source: integer({ default: 10, min: 0, max: 1_000_000, doc: 'Failed digest guesses (a wrong password, or a name no endpoint has) one source address may make in a window before its requests are refused with 403 unchecked; `0` = no limit. The blocks show in the log and in `patchbay_sip_auth_*` metrics' }),
        max_per_endpoint: integer({ default: 30, min: 0, max: 1_000_000, doc: 'Failed guesses at one endpoint, from any address, in a window before guesses at it are refused unchecked — except from the addresses it authenticated from lately, so that guessing from many addresses does not lock its phones out; `0` = no limit' }),
        window_seconds: integer({ default: 60, min: 1, max: 86400, doc: 'Window the failed guesses are counted in, 1–86400' }),
        block_seconds: integer({ default: 60, min: 1, max: 86400, doc: 'How long a source or endpoint that reached its limit is refused, 1–86400' }),
        tracked_addresses: integer({ default: 10_000, min: 1, max: 10_000_000, doc: 'Sources (and endpoints) remembered at once; when more fail, the one that failed least recently is forgotten' }),
      }),
      rtp_port_start: integer({ default: 10000, min: 1024, max: 65534, doc: 'First RTP port: each call takes an even port for RTP and the odd one above it for RTCP' }),
      rtp_port_end: integer({ default: 20000, min: 1025, max: 65535, doc: 'Last RTP port' }),
      strict_rtp: boolean({
        default: true,
        doc: "Strict RTP (Asterisk's `strictrtp`): a call's media source is learned only at its start and after the far end's SDP moves its media, from a source that sent `sip.rtp_probation` packets in sequence; then RTP and RTCP from anywhere else are dropped, so nobody else can take over the call's audio (RTP bleed). `false`: media follows any sender of the right payload type",
      }),
      rtp_probation: integer({
        default: 4,
        min: 1,
        max: 32,
        doc: "Packets in sequence a new media source must send while strict RTP learns before the call's media goes to it (Asterisk's `probation`)",
      }),
      rtcp_interval_ms: integer({
        default: 5000,
        min: 500,
        max: 60000,
        doc: "Mean time between RTCP reports of a call, in ms (each interval is randomised to 0.5–1.5 times it, RFC 3550); Asterisk's `rtcpinterval`",
      }),
      jitterbuffer: boolean({ default: true, doc: 'Adaptive jitter buffer on the audio received from SIP calls (`false`: audio is played as it arrives)' }),
      jitterbuffer_min_delay_ms: integer({ default: 20, min: 0, max: 1000, doc: 'Least delay the jitter buffer keeps, in ms' }),
      jitterbuffer_max_delay_ms: integer({
        default: 200,
        min: 20,
        max: 1000,
        doc: "Most delay the jitter buffer grows to when the network jitters, in ms; later packets are dropped (Asterisk's `jbmaxsize`)",
      }),
      pjsip_conf: filePath({
        default: null,
        docDefault: '`null`',
        doc: "An Asterisk `pjsip.conf` to read endpoints, aors, auths, identifies, transports and the global section from (Asterisk's syntax, templates included)",
        check: (file: string, p: readonly Seg[], ctx: ReadContext) => {
          try {
            if (!fs.statSync(file).isFile()) ctx.fail(p, `${file} is not a regular file`);
          } catch (err) {
            ctx.fail(p, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
          }
        },
      }),
    }),
    asterisk_config_dir: filePath({
      default: null,
      env: 'PATCHBAY_ASTERISK_CONFIG_DIR',
      docDefault: '`null`',
      doc: "An Asterisk configuration directory (a copy of `/etc/asterisk`) read as it is: asterisk.conf, http.conf, ari.conf, acl.conf, websocket_client.conf, extensions.conf, pjsip.conf and musiconhold.conf; settings in this file override what it says. Whatever Patchbay does not understand there is named in one warning line each at start-up (see [Migrating from Asterisk](#migrating-from-asterisk))",
      check: (dir: string, p: readonly Seg[], ctx: ReadContext) => {
        try {
          if (!fs.statSync(dir).isDirectory()) ctx.fail(p, `${dir} is not a directory`);
        } catch (err) {
          ctx.fail(p, `cannot read ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
        }
      },
    }),
    moh_classes: custom<ReadonlyMap<string, string>, Record<string, string>>({
      docDefault: '`{}`',
      doc: "Music-on-hold classes kept outside `dirs.moh`: class name → directory of audio files (musiconhold.conf's `mode=files` classes). Other classes are the subdirectories of `dirs.moh`",
      read: (v, p, ctx) => {
        const classes = new Map<string, string>();
        if (v === undefined || v === null) return classes;
        if (!isPlainObject(v)) return ctx.fail(p, `must be a mapping of class name to directory, got ${describe(v)}`);
        for (const [name, dir] of Object.entries(v)) {
          if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name) || name === '.' || name === '..') ctx.fail([...p, name], 'a class name is 1–64 letters, digits, _, - or .');
          if (typeof dir !== 'string' || dir.trim() === '' || dir.includes('\0')) ctx.fail([...p, name], 'must be a directory path');
          classes.set(name, path.resolve(ctx.baseDir, dir as string));
        }
        if (classes.size > 1000) ctx.fail(p, 'at most 1000 classes');
        return classes;
      },
    }),
    chan_websocket: section({
      control_message_format: oneOf({
        values: ['plain-text', 'json'],
        default: 'plain-text',
        docDefault: '`plain-text`',
        doc: "Control messages of media WebSockets when the dial string has no `f()` (Asterisk's chan_websocket.conf `control_message_format`): `plain-text` or `json`",
      }),
      connect_timeout_seconds: integer({
        default: 30,
        min: 1,
        max: 3600,
        doc: 'Seconds an `INCOMING` media channel waits for its application to connect to `/media/<id>` once called; then it hangs up and the id is dead (see [media over WebSocket](media-websocket.md))',
      }),
    }),
    websocket_clients: recordList(WEBSOCKET_CLIENT, {
      what: 'WebSocket clients',
      itemWhat: 'a mapping with name and uri',
      default: [],
      docDefault: '`[]`',
      doc: "WebSocket servers Patchbay connects to, by name (Asterisk's `websocket_client.conf`): media channels in client mode (`WebSocket/<name>`, see [media over WebSocket](media-websocket.md)) and ARI outbound WebSockets (`ari.outbound_websockets`; a reload applies changes to them)",
      check: (client, _i, before, p, ctx) => {
        if (before.some((other) => other.name === client.name)) ctx.fail([...p, 'name'], `duplicate WebSocket client '${client.name}'`);
        if ((client.username === '') !== (client.password === '')) ctx.fail([...p, 'password'], 'username and password go together');
        if ((client.certFile === null) !== (client.privKeyFile === null)) ctx.fail([...p, 'priv_key_file'], 'cert_file and priv_key_file go together');
        if ((client.proxyUsername === '') !== (client.proxyPassword === '')) ctx.fail([...p, 'proxy_password'], 'proxy_username and proxy_password go together');
      },
    }),
    max_channels: integer({
      default: 0,
      min: 0,
      max: INT32_MAX,
      doc: 'Most channels at once; `0` = automatic: derived from the open-file limit and the memory the process may use (see [Channel limits](#channel-limits)). Beyond it, requests that make channels are refused (see below)',
    }),
    local_max_depth: integer({
      default: 20,
      min: 0,
      max: INT32_MAX,
      doc: 'Most Local channel pairs in a row: a Local channel requested by a channel that a Local channel led to is one deeper, and beyond this the request fails as unavailable (a dialplan that dials itself through Local stops). `0` = unlimited',
    }),
    max_bridges: integer({ default: 10_000, min: 1, max: INT32_MAX, doc: 'Most bridges at once; beyond, creating one answers 503 (each bridge ticks on the media clock, empty or not)' }),
    max_mailboxes: integer({ default: 10_000, min: 1, max: INT32_MAX, doc: 'Most mailboxes (`PUT /mailboxes/{name}`); beyond, a new one answers 503 (each is a database row kept until deleted)' }),
    max_device_states: integer({ default: 10_000, min: 1, max: INT32_MAX, doc: 'Most application-controlled device states (`Stasis:` names, `PUT /deviceStates/{name}`); beyond, a new one answers 503' }),
    variables: section({
      max_channel_bytes: integer({ default: 1024 * 1024, min: 64 * 1024, max: INT32_MAX, doc: 'Most bytes one channel\'s variables hold, names and values counted as UTF-16 (2 bytes a character); beyond it a variable that would grow them is refused like one beyond the count (see [variable bounds](variable-bounds.md)). 65536–2³¹−1' }),
      max_global_bytes: integer({ default: 16 * 1024 * 1024, min: 64 * 1024, max: INT32_MAX, doc: 'Most bytes all global variables hold together, counted as for channels. 65536–2³¹−1' }),
    }),
    local_max_descendants: integer({ default: 500, min: 0, max: INT32_MAX, doc: 'Most Local channel pairs one call chain (the channels sharing a linkedid) may make in all while any of its Local channels lives; beyond it a Local request fails as unavailable, so a loop that widens (`Dial(Local/x&Local/x)`) stops. `0` = unlimited' }),
    cdr: CDR_SETTINGS,
    cel: CEL_SETTINGS,
    cluster: CLUSTER_SETTINGS,
    max_open_files: integer({ default: 0, min: 0, max: INT32_MAX, doc: 'Most open files; `0` = unlimited' }),
    max_load: decimal({ default: 0, min: 0, max: 1_000_000, doc: 'Load-average ceiling (a decimal is allowed); `0` = unlimited' }),
    config_objects: custom<ConfigObjects, Record<string, Record<string, Record<string, Record<string, string | number | boolean> | null>>>>({
      docDefault: '`{}`',
      doc: 'Read-only dynamic configuration objects (see below)',
      read: readConfigObjects,
    }),
  },
  // The default credentials only on loopback (checked before a server id is generated and stored).
  (top, _p, ctx) => {
    const users = (top.ari as { users: readonly AriUser[] }).users;
    const bind = (top.http as { bind: string }).bind;
    if ((top.metrics as { requireAuth: boolean | 'auto' }).requireAuth === false && !isLoopback(bind)) {
      ctx.fail(['metrics', 'require_auth'], `may only be false on a loopback address, got http.bind '${bind}'`);
    }
    checkOutboundWebSockets(top, ctx);
    if (usesDefaultPassword(users) && !isLoopback(bind)) {
      ctx.fail(['http', 'bind'], `the default password may only be used on a loopback address (127.0.0.0/8, ::1, localhost), got '${bind}'; change the password of user 'asterisk' in ari.users or bind to loopback`);
    }
  },
);

/** A quarter of the open files for HTTP: the rest stays for calls, recordings, SIP and logs. */
function defaultMaxHttpConnections(): number {
  return Math.max(16, Math.min(4096, Math.floor((openFileLimit() ?? 1024) / 4)));
}
