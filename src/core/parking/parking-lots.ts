// Call parking as Asterisk's res_parking keeps it: each lot (parking-conf.ts) holds its parked
// calls in one holding bridge of its own (ARI: type holding, technology holding_bridge, class
// parking, creator Parking, named like the lot) where they hear music on hold; a call takes a space
// (the lowest free one, or the one after the last taken with findslot=next, PARKINGEXTEN's or a
// random one when asked), the space's device `park:<space>@<context>` turns InUse, and the call
// leaves when it is retrieved (ParkedCall()), when it hangs up, or when its time is up: then it
// carries Asterisk's PARKING_SPACE, PARKEDLOT, PARKER and PARKER_FLAT and goes back to the dialplan
// (comebacktoorigin: `park-dial`,<flattened parker>,1 whose Dial() rings the parker; otherwise the
// lot's comebackcontext). The core knows no application: the dialplan's Park() and ParkedCall()
// (pbx/apps/parking.ts) run over this.
import type { Logger } from 'pino';
import type { Bridge } from '../bridges/bridge.ts';
import type { Bridges } from '../bridges/bridges.ts';
import { CAUSE } from '../channels/causes.ts';
import type { Channel } from '../channels/channel.ts';
import type { DeviceStates, DeviceStateValue } from '../device-states.ts';
import { DEFAULT_LOT, type ParkingConfig, type ParkingLotConfig } from './parking-conf.ts';

/** The context Asterisk adds the call-back extensions of timed-out parked calls to. */
export const PARK_DIAL_CONTEXT = 'park-dial';
/** How long a parking transfer's transferer waits for its transferee to be parked, at most. */
const PARKER_WAIT_MS = 30_000;
/** Most park-dial extensions kept (one per parker whose call came back; the oldest goes first). */
const MAX_PARK_DIAL = 1_000;
const DEVICE_PREFIX = 'park:';

/** How a parked call's stay ended, for the Park() that waits on it. */
type ParkedOutcome =
  | { readonly kind: 'retrieved'; readonly by: Channel }
  | { readonly kind: 'timeout'; readonly location: { readonly context: string; readonly exten: string; readonly priority: number } | undefined }
  | { readonly kind: 'hungup' };

export interface ParkRequest {
  /** The lot's name; empty: the channel's (PARKINGLOT), else `default`. */
  readonly lot: string;
  /** Whose the call is: the channel that comes back dials this (`PJSIP/bob`). */
  readonly parkerDialString: string;
  /** Seconds, instead of the lot's parkingtime (Park's t option). */
  readonly timeout?: number;
  /** Park's R option: a random space. */
  readonly random?: boolean;
  /** Park's c option: where a timed-out call goes instead (`context,exten,priority`, already split). */
  readonly comeback?: { readonly context: string; readonly exten: string; readonly priority: number };
  /** Music on hold class for this call instead of the lot's. */
  readonly mohClass?: string;
}

/** A parked call, as the lot keeps it. */
interface ParkedCall {
  readonly channel: Channel;
  readonly lot: ParkingLotConfig;
  readonly space: number;
  readonly parkerDialString: string;
  readonly since: number;
}

interface Stay extends ParkedCall {
  timer: NodeJS.Timeout | undefined;
  settle(outcome: ParkedOutcome): void;
  readonly request: ParkRequest;
  readonly onHangup: () => void;
}

interface ParkingDeps {
  readonly bridges: Bridges;
  readonly deviceStates: DeviceStates;
  readonly log: Logger;
  /** Music on hold of a class on a lot's bridge (parkedmusicclass); none: the bridge's idle music. */
  startMusic?(bridge: Bridge, mohClass: string): void;
  /** The dialplan's extensions changed (a park-dial extension was added): the kernel builds it again. */
  dialplanChanged(): void;
  /** Whether an extension exists (the comeback context's). */
  extensionExists(context: string, exten: string): boolean;
  /** Plays media (`digits:701`, `sound:pbx-parkingfailed`) to a channel; resolves when it ends. */
  announce(channel: Channel, media: string): Promise<void>;
}

/** Asterisk's ast_channel_name_to_dial_string: the name up to its last `-` (PJSIP/bob-00000001 → PJSIP/bob). */
export function dialStringOfChannelName(name: string): string {
  const dash = name.lastIndexOf('-');
  return dash < 0 ? name : name.slice(0, dash);
}

/** Asterisk's flatten_dial_string: every `/` becomes `_` (an extension name). */
function flattenDialString(dial: string): string {
  return dial.replaceAll('/', '_');
}

export class ParkingLots {
  #config: ParkingConfig;
  readonly #deps: ParkingDeps;
  /** The parked calls of each lot, by space. */
  readonly #parked = new Map<string, Map<number, Stay>>();
  /** Each lot's holding bridge, made at its first parked call and kept (as Asterisk's). */
  readonly #bridgeOf = new Map<string, Bridge>();
  /** A lot's space after the last one taken (findslot=next). */
  readonly #nextSpace = new Map<string, number>();
  /** The park-dial extensions: flattened parker → `dial,seconds` for Dial(). */
  readonly #parkDial = new Map<string, string>();
  /** Parking transfers' transferers waiting for their transferee's space (undefined: it was not parked). */
  readonly #parkers = new Map<Channel, (space: number | undefined) => void>();

  constructor(config: ParkingConfig, deps: ParkingDeps) {
    this.#config = config;
    this.#deps = deps;
    deps.deviceStates.addProvider((name) => this.#deviceState(name));
  }

  /** res_parking.conf read again: new calls use the new lots; parked calls keep the lot they were parked in. */
  configure(config: ParkingConfig): void {
    this.#config = config;
  }

  get config(): ParkingConfig {
    return this.#config;
  }

  /** The park-dial extensions to add to the dialplan: flattened parker → Dial()'s data. */
  get parkDialExtensions(): ReadonlyMap<string, string> {
    return this.#parkDial;
  }

  lot(name: string): ParkingLotConfig | undefined {
    return this.#config.lots.get(name);
  }

  /** The lot a channel parks in or retrieves from when none is named (PARKINGLOT, else default). */
  lotNameOf(channel: Channel): string {
    return channel.getVariable('PARKINGLOT')?.trim() || DEFAULT_LOT;
  }

  /** The calls parked in `lot`, by space. */
  parkedIn(lot: string): ParkedCall[] {
    return [...(this.#parked.get(lot)?.values() ?? [])].sort((a, b) => a.space - b.space);
  }

  /**
   * Takes a space for `channel` (a string says why not: full, unknown lot, bad PARKINGEXTEN); the
   * space's device turns InUse. `enter()` then puts the call in the lot's bridge; the promise
   * settles when its stay ends.
   */
  reserve(channel: Channel, request: ParkRequest): { space: number; lot: ParkingLotConfig; enter: () => Promise<ParkedOutcome> } | string {
    const taken = this.#take(channel, request);
    this.#parkers.get(channel)?.(typeof taken === 'string' ? undefined : taken.space);
    return taken;
  }

  /**
   * A parking transfer (a blind transfer to a parkext): `parker`, left up by the transfer, hears
   * the space `parkee` gets (pbx-parkingfailed when it gets none), then is hung up, as Asterisk's
   * parker_parked_call_message_response with hangup_after.
   */
  takeParker(parker: Channel, parkee: Channel): void {
    let done = false;
    const finish = async (space: number | undefined): Promise<void> => {
      if (done) return;
      done = true;
      clearTimeout(bound);
      if (this.#parkers.get(parkee) === waiter) this.#parkers.delete(parkee);
      try {
        if (!parker.hangingUp) await this.#deps.announce(parker, space === undefined ? 'sound:pbx-parkingfailed' : `digits:${space}`);
      } finally {
        if (!parker.hangingUp) parker.hangup(CAUSE.normal, { unrequested: true });
      }
    };
    const bound = setTimeout(() => void finish(undefined), PARKER_WAIT_MS);
    const waiter = (space: number | undefined): void => void finish(space);
    this.#parkers.set(parkee, waiter);
    // The transferee hung up before it was parked: the parker is told the parking failed.
    parkee.once('hangup', () => void finish(undefined));
  }

  #take(channel: Channel, request: ParkRequest): { space: number; lot: ParkingLotConfig; enter: () => Promise<ParkedOutcome> } | string {
    const lotName = request.lot || this.lotNameOf(channel);
    const lot = this.#config.lots.get(lotName);
    if (!lot) return `Cannot park ${channel.name}: lot ${lotName} unknown`;
    let preferred = -1;
    if (request.random) preferred = lot.parkposStart + Math.floor(Math.random() * (lot.parkposStop - lot.parkposStart + 1));
    else {
      const wanted = channel.getVariable('PARKINGEXTEN')?.trim();
      if (wanted) {
        const match = /^\d{1,9}/.exec(wanted);
        preferred = match ? Number(match[0]) : 0;
        if (preferred <= 0) return `PARKINGEXTEN='${wanted.slice(0, 40)}' is not a valid parking space.`;
      }
    }
    if (preferred > 0 && (preferred < lot.parkposStart || preferred > lot.parkposStop)) {
      this.#deps.log.warn(`Preferred parking spot ${preferred} is out of bounds (${lot.parkposStart}-${lot.parkposStop})`);
      preferred = -1;
    }
    const parked = this.#parked.get(lot.name) ?? new Map<number, Stay>();
    const space = this.#freeSpace(lot, parked, preferred);
    if (space < 0) return `Failed to get parking space in lot '${lot.name}'. All full.`;
    this.#nextSpace.set(lot.name, space + 1 > lot.parkposStop ? lot.parkposStart : space + 1);
    this.#parked.set(lot.name, parked);
    let settle: (outcome: ParkedOutcome) => void = () => undefined;
    const outcome = new Promise<ParkedOutcome>((resolve) => (settle = resolve));
    const stay: Stay = {
      channel,
      lot,
      space,
      parkerDialString: request.parkerDialString,
      since: Date.now(),
      timer: undefined,
      request,
      settle: (result) => {
        if (parked.get(space) !== stay) return;
        parked.delete(space);
        clearTimeout(stay.timer);
        channel.off('hangup', stay.onHangup);
        this.#deviceChanged(lot, space, 'NOT_INUSE');
        settle(result);
      },
      onHangup: () => {
        this.#bridgeOf.get(lot.name)?.remove(channel);
        stay.settle({ kind: 'hungup' });
      },
    };
    parked.set(space, stay);
    channel.once('hangup', stay.onHangup);
    this.#deviceChanged(lot, space, 'INUSE');
    this.#deps.log.info({ channel: channel.name, lot: lot.name, space }, `Parking '${channel.name}' in '${lot.name}' at space ${space}`);
    const enter = (): Promise<ParkedOutcome> => {
      if (parked.get(space) !== stay) return outcome;
      if (channel.hangingUp) {
        stay.settle({ kind: 'hungup' });
        return outcome;
      }
      if (!channel.answered) channel.answer();
      const bridge = this.#bridge(lot, request.mohClass);
      this.#deps.bridges.addChannel(bridge, channel, { roles: ['holding_participant'] });
      const seconds = request.timeout ?? lot.parkingtime;
      if (seconds > 0) stay.timer = setTimeout(() => this.#timeOut(stay), seconds * 1000);
      return outcome;
    };
    return { space, lot, enter };
  }

  /** ParkedCall(): the call parked at `space` (any when undefined: the first) leaves the lot for `by`. */
  retrieve(lotName: string, space: number | undefined, by: Channel): ParkedCall | undefined {
    const parked = this.#parked.get(lotName);
    if (!parked) return undefined;
    const stay = space === undefined ? [...parked.values()].sort((a, b) => a.since - b.since)[0] : parked.get(space);
    if (!stay || stay.channel.hangingUp) return undefined;
    this.#bridgeOf.get(lotName)?.remove(stay.channel);
    stay.settle({ kind: 'retrieved', by });
    return stay;
  }

  /** Every parked call leaves (shutdown): they are hung up by their owners. */
  clear(): void {
    for (const parked of this.#parked.values()) for (const stay of parked.values()) clearTimeout(stay.timer);
  }

  #freeSpace(lot: ParkingLotConfig, parked: ReadonlyMap<number, Stay>, preferred: number): number {
    // parking_lot_get_space: from the preferred (or next, or first) space upwards, then from the start.
    const start = preferred > 0 ? preferred : lot.findNext ? (this.#nextSpace.get(lot.name) ?? lot.parkposStart) : lot.parkposStart;
    for (let space = start; space <= lot.parkposStop; space++) if (!parked.has(space)) return space;
    for (let space = lot.parkposStart; space < start; space++) if (!parked.has(space)) return space;
    return -1;
  }

  #bridge(lot: ParkingLotConfig, mohClass: string | undefined): Bridge {
    let bridge = this.#bridgeOf.get(lot.name);
    if (!bridge || bridge.destroyed) {
      bridge = this.#deps.bridges.create({ name: lot.name, types: ['holding'], maker: { bridgeClass: 'parking', creator: 'Parking' } });
      this.#bridgeOf.set(lot.name, bridge);
      const music = mohClass || lot.mohClass;
      if (music) this.#deps.startMusic?.(bridge, music);
    }
    return bridge;
  }

  /** parking_duration_callback: the call leaves the lot with the timeout variables, for where it comes back. */
  #timeOut(stay: Stay): void {
    const { channel, lot, space } = stay;
    if (channel.hangingUp) return;
    this.#bridgeOf.get(lot.name)?.remove(channel);
    const dial = stay.parkerDialString;
    const flat = flattenDialString(dial);
    for (const [name, value] of [
      ['PARKING_SPACE', String(space)],
      ['PARKEDLOT', lot.name],
      ['PARKER', dial],
      ['PARKER_FLAT', flat],
      ['BRIDGE_FEATURES', ''],
    ] as const) channel.setSystemVariable(name, value);
    this.#deps.log.info({ channel: channel.name, lot: lot.name, space }, `Parked call ${channel.name} at ${space} timed out`);
    // The call-back extension park-dial,<flat>,1: Dial(<parker>,<comebackdialtime>), newest kept.
    if (flat !== '') {
      this.#parkDial.delete(flat);
      this.#parkDial.set(flat, `${dial},${lot.comebackDialTime}`);
      if (this.#parkDial.size > MAX_PARK_DIAL) this.#parkDial.delete(this.#parkDial.keys().next().value!);
      this.#deps.dialplanChanged();
    }
    stay.settle({ kind: 'timeout', location: stay.request.comeback ?? this.#comeback(lot, flat) });
  }

  /** comeback_goto: where a timed-out call goes; undefined: nowhere (it is hung up, as Asterisk's). */
  #comeback(lot: ParkingLotConfig, flat: string): { context: string; exten: string; priority: number } | undefined {
    const exists = this.#deps.extensionExists;
    if (lot.comebackToOrigin) {
      if (flat !== '' && exists(PARK_DIAL_CONTEXT, flat)) return { context: PARK_DIAL_CONTEXT, exten: flat, priority: 1 };
      this.#deps.log.error(`Can not start the parked call at ${PARK_DIAL_CONTEXT},${flat},1 because extension does not exist. Terminating call.`);
      return undefined;
    }
    if (flat !== '' && exists(lot.comebackContext, flat)) return { context: lot.comebackContext, exten: flat, priority: 1 };
    if (exists(lot.comebackContext, 's')) return { context: lot.comebackContext, exten: 's', priority: 1 };
    return { context: 'default', exten: 's', priority: 1 };
  }

  #deviceChanged(lot: ParkingLotConfig, space: number, state: DeviceStateValue): void {
    this.#deps.deviceStates.changed(`park:${space}@${lot.context}`, state);
  }

  /** `park:<space>@<context>`: InUse while a call is parked there, NotInUse for a free space of a lot. */
  #deviceState(name: string): DeviceStateValue | undefined {
    if (name.length > 200 || name.slice(0, DEVICE_PREFIX.length).toLowerCase() !== DEVICE_PREFIX) return undefined;
    const at = name.indexOf('@');
    if (at < 0) return undefined;
    const space = Number(name.slice(DEVICE_PREFIX.length, at));
    const context = name.slice(at + 1);
    if (!Number.isInteger(space)) return undefined;
    for (const lot of this.#config.lots.values()) {
      if (lot.context !== context || space < lot.parkposStart || space > lot.parkposStop) continue;
      return this.#parked.get(lot.name)?.has(space) ? 'INUSE' : 'NOT_INUSE';
    }
    // A lot a reload took away keeps its parked calls until they leave.
    for (const parked of this.#parked.values()) if (parked.get(space)?.lot.context === context) return 'INUSE';
    return undefined;
  }
}
