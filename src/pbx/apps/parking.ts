// Park([lot[,options]]) and ParkedCall([lot[,space]]), as res_parking's applications over the
// core's parking lots (core/parking/parking-lots.ts).
// - Park(): the channel is answered, takes a space in the lot (named, else PARKINGLOT, else
//   `default`; PARKINGEXTEN asks for a space) and waits in the lot's holding bridge with music on
//   hold. Its parker is the channel in BLINDTRANSFER (the phone that transferred it to the parkext),
//   else itself; without a blind transfer and without option s it hears its space first
//   (SayDigits). Options: s (silence), t(seconds) (its own parking time), c([[context,]exten,]priority)
//   (where it goes when the time is up), R (a random space); r (ringing instead of music) is named
//   not implemented. When the lot is full the dialplan goes on (pbx-parkingfailed is played but for
//   a blind transfer or s). Retrieved, it is in a call with its retriever: when that call ends its
//   run ends too, unless it was transferred (then it goes on there). When its time is up it goes
//   where the lot sends it (park-dial to ring the parker, or comebackcontext).
// - ParkedCall(): the channel is answered and takes the call parked at the space (the first one
//   parked without a space): both are in a basic two-party call as Dial() makes. No call there:
//   pbx-invalidpark is played and the channel is hung up, as Asterisk's.
import type { Channel } from '../../core/channels/channel.ts';
import { CAUSE, SOFT_HANGUP } from '../../core/channels/causes.ts';
import { TwoPartyCall } from '../../core/channels/two-party-call.ts';
import { dialStringOfChannelName, type ParkRequest } from '../../core/parking/parking-lots.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import type { PbxServices } from '../application-services.ts';
import { parseDialOptions } from './dial-options.ts';

/** Longest t() taken, in seconds (a day): a timer is armed with it. */
const MAX_TIMEOUT = 86_400;

async function play(channel: Channel, services: PbxServices, media: string): Promise<void> {
  const engine = services.playbacks;
  if (!engine || channel.hangingUp) return;
  await engine.finished(engine.playOnChannel(channel, { media: [media], language: channel.language, internal: true }));
}

/** The run ends as an application returning -1 does: one APPUNLOAD hang-up request. */
function hangUpAtEnd(channel: Channel, cause: number = CAUSE.normal): AppOutcome {
  if (!channel.hangingUp) channel.hangup(cause, { soft: SOFT_HANGUP.appUnload });
  return 'stop';
}

/** Where the channel's call with another party leaves it (the retrieved call, for both parties). */
async function afterCall(channel: Channel): Promise<AppOutcome> {
  const call = TwoPartyCall.of(channel);
  if (!call) return hangUpAtEnd(channel);
  const exit = await call.exitOf(channel);
  switch (exit.kind) {
    case 'hungup':
      return 'stop';
    case 'peer-hungup':
      return hangUpAtEnd(channel, exit.cause);
    case 'redirected':
      channel.setLocation({ context: exit.location.context, exten: exit.location.exten, priority: 1 });
      return 'jump';
    case 'done':
      return hangUpAtEnd(channel);
  }
}

/** c([[context,]exten,]priority): a numeric priority; undefined when the argument is not usable. */
function comebackOf(channel: Channel, argument: string): ParkRequest['comeback'] {
  const parts = argument.split(',').map((part) => part.trim());
  if (parts.length > 3) return undefined;
  const priority = Number(parts.at(-1));
  if (!Number.isInteger(priority) || priority < 1) return undefined;
  const exten = parts.length >= 2 ? parts.at(-2)! : channel.location.exten;
  const context = parts.length === 3 ? parts[0]! : channel.location.context;
  return exten && context ? { context, exten, priority } : undefined;
}

export const park: DialplanApplication = {
  name: 'Park',
  synopsis: 'Parks the channel in a parking lot (res_parking.conf) until ParkedCall() retrieves it or its time is up',
  async execute(channel, _args, services, rawData): Promise<AppOutcome> {
    const parking = services.parking;
    if (channel.hangingUp) return 'stop';
    if (!parking) {
      services.log.warn({ channel: channel.name }, 'Park: no parking lots in this server');
      return 'next';
    }
    if (!channel.answered) channel.answer();
    const comma = rawData.indexOf(',');
    const lot = (comma < 0 ? rawData : rawData.slice(0, comma)).trim();
    const options = parseDialOptions(comma < 0 ? '' : rawData.slice(comma + 1));
    const blindTransfer = channel.getVariable('BLINDTRANSFER')?.trim() ?? '';
    const silence = options.has('s');
    const seconds = options.get('t')?.trim();
    const timeout = seconds !== undefined && /^\d{1,6}$/.test(seconds) && Number(seconds) <= MAX_TIMEOUT ? Number(seconds) : undefined;
    if (seconds !== undefined && timeout === undefined) services.log.warn({ channel: channel.name }, `Park: t(${seconds.slice(0, 20)}) is not a number of seconds; the lot's time applies`);
    const comebackArg = options.get('c');
    const comeback = comebackArg === undefined ? undefined : comebackOf(channel, comebackArg);
    if (comebackArg !== undefined && !comeback) services.log.warn({ channel: channel.name }, `Park: c(${comebackArg.slice(0, 80)}) is not [[context,]exten,]priority; the lot's comeback applies`);
    if (options.has('r')) services.log.warn({ channel: channel.name }, 'Park: option r (ringing instead of music) is not implemented; music on hold plays');
    const reserved = parking.reserve(channel, {
      lot,
      parkerDialString: dialStringOfChannelName(blindTransfer || channel.name),
      ...(timeout !== undefined ? { timeout } : {}),
      ...(options.has('R') ? { random: true } : {}),
      ...(comeback ? { comeback } : {}),
    });
    if (typeof reserved === 'string') {
      services.log.warn({ channel: channel.name }, reserved);
      if (!silence && !blindTransfer) await play(channel, services, 'sound:pbx-parkingfailed');
      return channel.hangingUp ? 'stop' : 'next';
    }
    // The parkee hears its space unless a blind transfer parked it (its transferer is the one told).
    if (!blindTransfer && !silence) await play(channel, services, `digits:${reserved.space}`);
    const outcome = await reserved.enter();
    switch (outcome.kind) {
      case 'hungup':
        return 'stop';
      case 'retrieved':
        return afterCall(channel);
      case 'timeout':
        if (!outcome.location) return hangUpAtEnd(channel);
        channel.setLocation(outcome.location);
        return 'jump';
    }
  },
  checkData(data): string[] {
    const comma = data.indexOf(',');
    return comma >= 0 && parseDialOptions(data.slice(comma + 1)).has('r') ? ['Park option r (ringing instead of music on hold) is not implemented'] : [];
  },
};

export const parkedCall: DialplanApplication = {
  name: 'ParkedCall',
  synopsis: 'Retrieves a parked call from a parking lot (the given space, else the first parked)',
  async execute(channel, [lotArg, spaceArg], services): Promise<AppOutcome> {
    const parking = services.parking;
    if (channel.hangingUp) return 'stop';
    if (!channel.answered) channel.answer();
    const lot = lotArg?.trim() || parking?.lotNameOf(channel) || 'default';
    if (!parking?.lot(lot) && !parking?.parkedIn(lot).length) {
      services.log.error({ channel: channel.name }, 'Could not find the requested parking lot');
      await play(channel, services, 'sound:pbx-invalidpark');
      return hangUpAtEnd(channel);
    }
    const spaceText = spaceArg?.trim() ?? '';
    const space = spaceText === '' ? undefined : /^\d{1,9}$/.test(spaceText) ? Number(spaceText) : -1;
    if (space === -1) {
      await play(channel, services, 'sound:pbx-invalidpark');
      services.log.error({ channel: channel.name }, `value '${spaceText.slice(0, 40)}' for parking_space argument is invalid. Must be an integer greater than 0.`);
      return hangUpAtEnd(channel);
    }
    const parked = parking.retrieve(lot, space, channel);
    if (!parked) {
      await play(channel, services, 'sound:pbx-invalidpark');
      return hangUpAtEnd(channel);
    }
    services.log.info({ channel: channel.name, parked: parked.channel.name, lot, space: parked.space }, `${channel.name} retrieves ${parked.channel.name} from ${lot} space ${parked.space}`);
    // Asterisk moves the parked call into a new basic bridge, then the retriever joins it.
    const bridge = services.bridges?.createBasic();
    TwoPartyCall.connect(channel, parked.channel, [channel, parked.channel], bridge ? { bridge } : {});
    return afterCall(channel);
  },
};
