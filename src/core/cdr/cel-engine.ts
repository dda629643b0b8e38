// Channel event logging (Asterisk's main/cel.c): one row per thing that happened to a channel,
// raised from the same core events the CDR engine reads, filtered by cel.conf's `events` and `apps`.
import type { CoreEvent } from '../../spec/events.ts';
import type { Model } from '../../spec/index.ts';
import type { ChannelView } from './channel-view.ts';
import { AMA_CODE, type CelEvent, type CelEventType } from './record.ts';

export interface CelEngineOptions {
  /** Event types kept, upper case; `ALL` keeps every one. */
  readonly events: readonly string[];
  /** Applications whose APP_START/APP_END are kept, lower case; `all` keeps every one. */
  readonly apps: readonly string[];
  readonly post: (event: CelEvent) => void;
  /** What the CDR engine knows of a live channel (amaflags, linkedid, dialed). */
  readonly view: (channelId: string) => ChannelView | undefined;
  readonly now?: () => number;
}

interface Extra {
  readonly [key: string]: string | number;
}

export class CelEngine {
  #events: ReadonlySet<string>;
  #apps: ReadonlySet<string>;
  readonly #options: CelEngineOptions;
  readonly #now: () => number;
  /** Live channels per linkedid, for LINKEDID_END when the last one goes. */
  readonly #linked = new Map<string, number>();
  readonly #linkedOf = new Map<string, string>();
  /** The application each channel runs, for its APP_END. */
  readonly #running = new Map<string, { app: string; data: string }>();

  constructor(options: CelEngineOptions) {
    this.#options = options;
    this.#events = new Set(options.events);
    this.#apps = new Set(options.apps);
    this.#now = options.now ?? Date.now;
  }

  /** cel.conf read again (reload): the event types and applications logged from now on. */
  configure(events: readonly string[], apps: readonly string[]): void {
    this.#events = new Set(events);
    this.#apps = new Set(apps);
  }

  #wants(type: CelEventType): boolean {
    return this.#events.has('ALL') || this.#events.has(type);
  }

  #wantsApp(app: string): boolean {
    return this.#apps.has('all') || this.#apps.has(app.toLowerCase());
  }

  /** Feeds one core event (after the CDR engine saw it, so its view of the channel is current). */
  handle(event: CoreEvent): void {
    switch (event.type) {
      case 'ChannelCreated': {
        const linkedid = this.#options.view(event.channel.id)?.linkedid ?? event.channel.id;
        this.#linkedOf.set(event.channel.id, linkedid);
        this.#linked.set(linkedid, (this.#linked.get(linkedid) ?? 0) + 1);
        this.#raise('CHAN_START', event.channel);
        return;
      }
      case 'ChannelStateChange':
        if (event.channel.state === 'Up') this.#raise('ANSWER', event.channel);
        this.#application(event.channel);
        return;
      case 'ChannelDialplan':
        this.#application(event.channel);
        return;
      case 'ChannelEnteredBridge':
        if (event.channel) this.#raise('BRIDGE_ENTER', event.channel, { bridge_id: event.bridge.id, bridge_technology: event.bridge.technology }, peerNames(event.bridge, event.channel.id, this.#options.view));
        return;
      case 'ChannelLeftBridge':
        this.#raise('BRIDGE_EXIT', event.channel, { bridge_id: event.bridge.id, bridge_technology: event.bridge.technology }, peerNames(event.bridge, event.channel.id, this.#options.view));
        return;
      case 'ChannelDestroyed':
        this.#destroyed(event.channel, event.cause);
        return;
      default:
        return;
    }
  }

  /** CELGenUserEvent(name[,extra]): a USER_DEFINED event on the channel. */
  userEvent(snapshot: Model<'Channel'>, name: string, extra: string): void {
    this.#raise('USER_DEFINED', snapshot, { extra }, '', name);
  }

  /** APP_END of the application that ran, APP_START of the new one, as the dialplan moves. */
  #application(snapshot: Model<'Channel'>): void {
    const app = snapshot.dialplan.app_name;
    const data = snapshot.dialplan.app_data;
    const running = this.#running.get(snapshot.id);
    if (running && running.app === app && running.data === data) return;
    if (running) {
      this.#running.delete(snapshot.id);
      if (this.#wantsApp(running.app)) this.#raise('APP_END', snapshot, undefined, '', '', running);
    }
    if (app === '') return;
    this.#running.set(snapshot.id, { app, data });
    if (this.#wantsApp(app)) this.#raise('APP_START', snapshot);
  }

  #destroyed(snapshot: Model<'Channel'>, cause: number): void {
    const running = this.#running.get(snapshot.id);
    this.#running.delete(snapshot.id);
    if (running && this.#wantsApp(running.app)) this.#raise('APP_END', snapshot, undefined, '', '', running);
    this.#raise('HANGUP', snapshot, { hangupcause: cause, hangupsource: '', dialstatus: '' });
    this.#raise('CHAN_END', snapshot);
    const linkedid = this.#linkedOf.get(snapshot.id);
    this.#linkedOf.delete(snapshot.id);
    if (linkedid === undefined) return;
    const left = (this.#linked.get(linkedid) ?? 1) - 1;
    if (left > 0) {
      this.#linked.set(linkedid, left);
      return;
    }
    this.#linked.delete(linkedid);
    this.#raise('LINKEDID_END', snapshot, undefined, '', '', undefined, linkedid);
  }

  #raise(type: CelEventType, snapshot: Model<'Channel'>, extra?: Extra, peer = '', userdeftype = '', app?: { app: string; data: string }, linkedid?: string): void {
    if (!this.#wants(type)) return;
    const view = this.#options.view(snapshot.id);
    this.#options.post({
      eventtype: type,
      eventtime: this.#now(),
      userdeftype,
      cid_name: snapshot.caller.name,
      cid_num: snapshot.caller.number,
      cid_ani: snapshot.caller.number,
      cid_rdnis: snapshot.caller_rdnis ?? '',
      cid_dnid: '',
      exten: snapshot.dialplan.exten,
      context: snapshot.dialplan.context,
      channame: snapshot.name,
      appname: app?.app ?? snapshot.dialplan.app_name,
      appdata: app?.data ?? snapshot.dialplan.app_data,
      amaflags: AMA_CODE[view?.amaflags ?? 'DOCUMENTATION'],
      accountcode: snapshot.accountcode,
      peeraccount: '',
      uniqueid: snapshot.id,
      linkedid: linkedid ?? this.#linkedOf.get(snapshot.id) ?? view?.linkedid ?? snapshot.id,
      userfield: '',
      peer,
      extra: extra ? JSON.stringify(extra) : '',
    });
  }
}

/** The names of the other channels in the bridge (CEL's `peer`), comma-separated. */
function peerNames(bridge: Model<'Bridge'>, self: string, view: (id: string) => ChannelView | undefined): string {
  return bridge.channels
    .filter((id) => id !== self)
    .map((id) => view(id)?.name ?? '')
    .filter(Boolean)
    .join(',');
}
