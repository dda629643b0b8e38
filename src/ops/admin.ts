// The admin routes (`/admin/...`) behind the CLI commands ARI has no operation for, the
// `asterisk -rx` habits: `pjsip show endpoints|endpoint X|contacts|registrations|transports`,
// `core show version|uptime|channels count|hanguphandlers`, `core set debug`, `logger rotate` and `sip trace`.
// Reading needs ARI credentials (a read-only user may); changing something needs a read-write user.
// Every answer is JSON; names come from the client and are only ever looked up, never interpreted.
import type { PjsipTechnology } from '../channels/pjsip/technology.ts';
import type { Core } from '../control/core.ts';
import { patchbayVersion } from '../core/system-info.ts';
import { formatAriDate } from '../util/ari-date.ts';
import { statSync } from 'node:fs';
import { getFileFormat } from '../media/codecs.ts';
import { cdrRoute, celRoute } from './record-routes.ts';
import { consoleRoute, type ConsoleSources } from './console-routes.ts';

export const ADMIN_PREFIX = '/admin/';

export interface AdminAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** What the routes need of the server, handed in by server.ts (ops/ does not know how it is built). */
export interface AdminServices {
  readonly core: Core;
  readonly pjsip: PjsipTechnology;
  /** The configured log level, what `core set debug off` returns to. */
  configuredLevel(): string;
  /** Sets the level of every logger of the server. */
  setLogLevel(level: string): void;
  currentLevel(): string;
  /** Rotates every file log channel and the server's own log file; resolves with what was rotated. */
  rotateLogs(): Promise<string[]>;
  /** What the operator console reads (SIP ladders, call quality, metrics history). */
  readonly console?: ConsoleSources;
  /** The cluster's members and health (`patchbay cluster status`); undefined when not a member. */
  readonly cluster?: () => unknown;
  /** Which member holds each channel (`GET /admin/cluster/channels`); undefined when not a member. */
  readonly clusterChannels?: () => Promise<unknown>;
}

/** Stored recordings described at most (the newest). */
const MAX_LISTED_RECORDINGS = 1000;
/** The header of the WAV files Patchbay writes; a foreign WAV's length is estimated with it. */
const WAV_HEADER_BYTES = 44;

/** Longest `sip trace on <match>` text: a host, a user or a Call-ID. */
const MAX_TRACE_MATCH = 256;

const notFound = (message: string): AdminAnswer => ({ status: 404, body: { message } });
const badRequest = (message: string): AdminAnswer => ({ status: 400, body: { message } });

export class AdminRoutes {
  #callsProcessed = 0;

  constructor(private readonly services: AdminServices) {
    // Asterisk's "calls processed": every channel created since start.
    services.core.channels.onLifecycle('created', () => {
      this.#callsProcessed += 1;
    });
  }

  /** Whether a method may be used by a read-only user (GET reads; everything else changes). */
  static isReading(method: string): boolean {
    return method === 'GET' || method === 'HEAD';
  }

  async handle(method: string, pathname: string, query: URLSearchParams): Promise<AdminAnswer> {
    const path = pathname.slice(ADMIN_PREFIX.length).split('/').map(safeDecode);
    if (path.some((part) => part === undefined)) return badRequest('Malformed path');
    const key = `${method} ${path.slice(0, 2).join('/')}`;
    if (method === 'GET' && this.services.console) {
      const answer = consoleRoute(this.services.console, path.filter((part): part is string => part !== undefined), query);
      if (answer) return answer;
    }
    switch (key) {
      case 'GET pjsip/endpoints':
        return path.length === 2 ? this.#endpoints() : path.length === 3 ? this.#endpoint(path[2]!) : notFound('Resource not found');
      case 'GET pjsip/contacts':
        return { status: 200, body: this.#contacts() };
      case 'GET pjsip/registrations':
        return { status: 200, body: this.#registrations() };
      case 'GET pjsip/transports':
        return { status: 200, body: this.#transports() };
      case 'GET recordings/':
      case 'GET recordings':
        return { status: 200, body: this.#recordings() };
      case 'GET core/status':
        return { status: 200, body: this.#status() };
      case 'GET core/hanguphandlers':
        return path.length === 2 ? this.#hangupHandlers() : path.length === 3 ? this.#hangupHandlers(path[2]!) : notFound('Resource not found');
      case 'PUT core/debug':
        return this.#debug(query.get('level'));
      case 'POST logger/rotate':
        return { status: 200, body: { rotated: await this.services.rotateLogs() } };
      case 'GET cdr':
        return path.length === 1 ? cdrRoute(this.services.core.records, query) : notFound('Resource not found');
      case 'GET cel':
        return path.length === 1 ? celRoute(this.services.core.records, query) : notFound('Resource not found');
      case 'GET sip/trace':
        return { status: 200, body: this.services.pjsip.sipTrace.describe() };
      case 'PUT sip/trace':
        return this.#trace(query.get('state'), query.get('match'));
      case 'GET cluster/channels': {
        const places = path.length === 2 ? await this.services.clusterChannels?.() : undefined;
        return places === undefined ? notFound('Not a cluster member (cluster.nats_url is not set)') : { status: 200, body: places };
      }
      case 'GET cluster': {
        const status = path.length === 1 ? this.services.cluster?.() : undefined;
        return status === undefined ? notFound('Not a cluster member (cluster.nats_url is not set)') : { status: 200, body: status };
      }
      default:
        return notFound('Resource not found');
    }
  }

  #endpoints(): AdminAnswer {
    const config = this.services.pjsip.config;
    const body = [...config.endpoints.values()].map((endpoint) => ({
      id: endpoint.id,
      state: this.#endpointState(endpoint.id),
      channels: this.#channelsOf(endpoint.id).length,
      context: endpoint.context,
      aors: endpoint.aors,
      auth: endpoint.auth,
      transport: endpoint.transport ?? '',
      contacts: endpoint.aors.reduce((sum, aor) => sum + this.#contactsOf(aor).length, 0),
    }));
    return { status: 200, body };
  }

  #endpoint(id: string): AdminAnswer {
    const endpoint = this.services.pjsip.config.endpoints.get(id);
    if (!endpoint) return notFound(`Endpoint '${id}' not found`);
    return {
      status: 200,
      body: {
        id: endpoint.id,
        state: this.#endpointState(id),
        context: endpoint.context,
        codecs: endpoint.codecs,
        dtmf_mode: endpoint.dtmfMode,
        transport: endpoint.transport ?? '',
        auth: endpoint.auth,
        outbound_auth: endpoint.outboundAuth,
        aors: endpoint.aors,
        identify_by: endpoint.identifyBy,
        callerid: endpoint.callerId ?? {},
        contacts: endpoint.aors.flatMap((aor) => this.#contactsOf(aor)),
        channels: this.#channelsOf(id).map((channel) => ({ id: channel.id, name: channel.name, state: channel.state })),
      },
    };
  }

  #endpointState(id: string): string {
    return this.services.core.endpoints.get('PJSIP', id)?.state ?? 'unknown';
  }

  /**
   * `core show hanguphandlers <channel>|all`: each channel's hang-up handlers, the one to run first
   * first; all channels (those with none left out, as Asterisk prints nothing for them) or one.
   */
  #hangupHandlers(name?: string): AdminAnswer {
    const { core } = this.services;
    const handlersOf = (channel: { readonly name: string }, handlers: string[]) => ({ channel: channel.name, handlers });
    if (name !== undefined) {
      const channel = core.channels.get(name) ?? core.channels.list().find((candidate) => candidate.name === name);
      if (!channel) return notFound('Channel does not exist.');
      return { status: 200, body: [handlersOf(channel, core.pbx.hangupHandlers.list(channel))] };
    }
    const body = [];
    for (const channel of core.channels.list()) {
      const handlers = core.pbx.hangupHandlers.list(channel);
      if (handlers.length > 0) body.push(handlersOf(channel, handlers));
    }
    return { status: 200, body };
  }

  #channelsOf(endpoint: string) {
    const prefix = `PJSIP/${endpoint}-`;
    return this.services.core.channels.list().filter((channel) => channel.name.startsWith(prefix));
  }

  #contactsOf(aor: string) {
    return this.services.pjsip.contacts().filter((contact) => contact.aor === aor);
  }

  #contacts() {
    return this.services.pjsip.contacts();
  }

  #registrations() {
    const now = Date.now();
    return this.services.pjsip.registrations().map((registration) => ({
      id: registration.id,
      server_uri: registration.serverUri,
      client_uri: registration.clientUri,
      status: registration.status,
      expires_in: registration.expiresAt > now ? Math.round((registration.expiresAt - now) / 1000) : 0,
    }));
  }

  #transports() {
    const configured = this.services.pjsip.config.transports;
    return this.services.pjsip.listeners().map((listener) => {
      const transport = configured.get(listener.name);
      return {
        id: listener.name,
        protocol: listener.protocol.toLowerCase(),
        bind: `${listener.host}:${listener.port ?? transport?.bind.port ?? ''}`,
        external_signaling_address: transport?.externalSignalingAddress ?? '',
        external_media_address: transport?.externalMediaAddress ?? '',
      };
    });
  }

  /**
   * Stored recordings with their date, size and length, newest first (the web console's list):
   * ARI's StoredRecording has only a name and a format. Each is found through the store, so the
   * recordings directory's confinement applies; one that vanishes meanwhile is left out.
   */
  #recordings() {
    const store = this.services.core.recordings.store;
    const described = [];
    for (const { name, format } of store.list().slice(0, 5 * MAX_LISTED_RECORDINGS)) {
      const found = store.find(name);
      if (!found || found.format !== format) continue;
      let stats;
      try {
        stats = statSync(found.real);
      } catch {
        continue;
      }
      const codec = getFileFormat(format);
      const header = codec?.container === 'wav' ? WAV_HEADER_BYTES : 0;
      const bytesPerSecond = codec ? codec.codec.rate * codec.codec.bytesPerSample : 0;
      described.push({
        name,
        format,
        size_bytes: stats.size,
        duration_seconds: bytesPerSecond > 0 ? Math.max(0, Math.round(((stats.size - header) / bytesPerSecond) * 10) / 10) : null,
        modified: formatAriDate(stats.mtime),
        modifiedMs: stats.mtimeMs,
        // The call it came from (its target's name and linkedid), when the server saw it start.
        call: this.services.core.recordingOrigins.find(name) ?? null,
      });
    }
    described.sort((a, b) => b.modifiedMs - a.modifiedMs || (a.name < b.name ? -1 : 1));
    return described.slice(0, MAX_LISTED_RECORDINGS).map(({ modifiedMs: _, ...rest }) => rest);
  }

  #status() {
    const { core } = this.services;
    const channels = core.channels.list();
    // Asterisk counts a call per channel running a dialplan or an application; here a channel
    // that is up (answered) is in a call.
    const calls = channels.filter((channel) => channel.state === 'Up').length;
    return {
      version: patchbayVersion(),
      startup_time: formatAriDate(core.startedAt),
      last_reload_time: formatAriDate(core.lastReloadAt),
      uptime_seconds: Math.floor((Date.now() - core.startedAt.getTime()) / 1000),
      since_reload_seconds: Math.floor((Date.now() - core.lastReloadAt.getTime()) / 1000),
      channels: channels.length,
      calls,
      calls_processed: this.#callsProcessed,
      log_level: this.services.currentLevel(),
    };
  }

  /** `core set debug <n>` turns the log to debug (trace from 5, as Asterisk's deepest level); `off` returns to the configured level. */
  #debug(level: string | null): AdminAnswer {
    if (level === null) return badRequest('level is required (a number 0-10, or off)');
    let name: string;
    if (level === 'off' || level === '0') name = this.services.configuredLevel();
    else if (/^\d{1,2}$/.test(level) && Number(level) <= 10) name = Number(level) >= 5 ? 'trace' : 'debug';
    else return badRequest(`level must be a number 0-10 or off, got '${level.slice(0, 32)}'`);
    this.services.setLogLevel(name);
    return { status: 200, body: { log_level: name } };
  }

  #trace(state: string | null, match: string | null): AdminAnswer {
    if (match !== null && match.length > MAX_TRACE_MATCH) return badRequest(`match is longer than ${MAX_TRACE_MATCH} characters`);
    const trace = this.services.pjsip.sipTrace;
    if (state === 'on') trace.enable(match ?? '');
    else if (state === 'off') trace.disable();
    else return badRequest("state must be 'on' or 'off'");
    return { status: 200, body: trace.describe() };
  }
}

function safeDecode(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}
