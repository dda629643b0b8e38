// Small applications: Verbose, Log, UserEvent, SendDTMF, ChanIsAvail, ResetCDR/NoCDR (accepted),
// PlayTones/StopPlayTones and Milliwatt.
import type { Channel } from '../../core/channels/channel.ts';
import { sendDtmf } from '../../core/channels/dtmf-sender.ts';
import type { Playback } from '../../core/playback/playback.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';

/** Verbose([level,]message): the message in the server's log (info level), as the console shows it. */
export const verbose: DialplanApplication = {
  name: 'Verbose',
  synopsis: 'Writes a message to the log (Verbose([level,]message))',
  execute(channel, _args, services, rawData) {
    // With one argument it is the message; with more, the first is the level (0-4).
    const comma = rawData.indexOf(',');
    const leveled = comma >= 0 && /^\s*\d+\s*$/.test(rawData.slice(0, comma));
    const level = leveled ? Number(rawData.slice(0, comma)) : 0;
    const message = leveled ? rawData.slice(comma + 1) : rawData;
    services.log.info({ channel: channel.name, verbose: level }, message);
    return 'next';
  },
};

const LOG_LEVELS: ReadonlyMap<string, 'error' | 'warn' | 'info' | 'debug'> = new Map([
  ['ERROR', 'error'],
  ['WARNING', 'warn'],
  ['NOTICE', 'info'],
  ['VERBOSE', 'info'],
  ['DTMF', 'info'],
  ['DEBUG', 'debug'],
]);

/** Log(level,message): ERROR, WARNING, NOTICE, DEBUG, VERBOSE or DTMF, to the server's log. */
export const log: DialplanApplication = {
  name: 'Log',
  synopsis: 'Writes a message to the log at a level (ERROR, WARNING, NOTICE, DEBUG, VERBOSE, DTMF)',
  execute(channel, _args, services, rawData) {
    const comma = rawData.indexOf(',');
    if (comma < 0) {
      services.log.warn({ channel: channel.name }, 'Log requires an argument: Log(<level>,<message>)');
      return 'next';
    }
    const level = LOG_LEVELS.get(rawData.slice(0, comma).trim().toUpperCase());
    const message = rawData.slice(comma + 1);
    if (!level) {
      services.log.warn({ channel: channel.name }, `Log: unknown level '${rawData.slice(0, comma).trim()}'`);
      return 'next';
    }
    services.log[level]({ channel: channel.name, context: channel.location.context, exten: channel.location.exten }, message);
    return 'next';
  },
};

/** Keys and values of a UserEvent body are bounded, so a dialplan loop cannot build huge events. */
const MAX_USEREVENT_FIELDS = 64;

/**
 * UserEvent(eventname[,key1: value1[,key2: value2...]]): an ARI ChannelUserevent to the
 * applications subscribed to the channel, `userevent` holding the pairs and `eventname`.
 */
export const userEvent: DialplanApplication = {
  name: 'UserEvent',
  synopsis: 'Sends a ChannelUserevent (eventname and key: value pairs) to ARI applications subscribed to the channel',
  execute(channel, [eventname = '', ...pairs], services) {
    const name = eventname.trim();
    if (name === '') {
      services.log.warn({ channel: channel.name }, 'UserEvent requires an argument (eventname)');
      return 'next';
    }
    const body: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const pair of pairs.slice(0, MAX_USEREVENT_FIELDS)) {
      const colon = pair.indexOf(':');
      if (colon <= 0) continue;
      const key = pair.slice(0, colon).trim();
      if (key === '' || key === 'eventname') continue;
      body[key] = pair.slice(colon + 1).trim();
    }
    channel.userEvent(name, body);
    return 'next';
  },
};

/** SendDTMF(digits[,timeout_ms[,duration_ms]]): plays the digits to the far end (`w` waits half a second). */
export const sendDtmfApp: DialplanApplication = {
  name: 'SendDTMF',
  synopsis: 'Sends DTMF digits to the far end (digits, pause between, duration)',
  async execute(channel, [digits = '', between, duration], services): Promise<AppOutcome> {
    if (digits.trim() === '') {
      services.log.warn({ channel: channel.name }, 'SendDTMF requires an argument (digits or *#aAbBcCdD)');
      return 'next';
    }
    const number = (text: string | undefined): number | undefined => {
      const value = Number.parseInt(text ?? '', 10);
      return Number.isInteger(value) && value > 0 ? Math.min(value, 10_000) : undefined;
    };
    const betweenMs = number(between);
    const durationMs = number(duration);
    await sendDtmf(channel, digits.slice(0, 256), { ...(betweenMs && { between: betweenMs }), ...(durationMs && { duration: durationMs }) });
    return channel.hangingUp ? 'stop' : 'next';
  },
};

/** Numeric AST_DEVICE_* values, as AVAILSTATUS carries them. */
const DEVICE_STATE_NUMBERS: ReadonlyMap<string, number> = new Map([
  ['UNKNOWN', 0],
  ['NOT_INUSE', 1],
  ['INUSE', 2],
  ['BUSY', 3],
  ['INVALID', 4],
  ['UNAVAILABLE', 5],
  ['RINGING', 6],
  ['RINGINUSE', 7],
  ['ONHOLD', 8],
]);

/**
 * ChanIsAvail(Tech/Resource[&Tech2/Resource2...][,options]): the first device that could take a
 * call. Sets AVAILCHAN and AVAILORIGCHAN (the device), AVAILSTATUS (its AST_DEVICE_* number) and
 * AVAILCAUSECODE; with option `a` every available device, `&`-joined. A device is available unless
 * its state is INVALID or UNAVAILABLE (option `s`: also not when in use).
 */
export const chanIsAvail: DialplanApplication = {
  name: 'ChanIsAvail',
  synopsis: 'Finds which of the given devices can take a call (AVAILCHAN, AVAILORIGCHAN, AVAILSTATUS, AVAILCAUSECODE)',
  execute(channel, [devices = '', options = ''], services) {
    if (devices.trim() === '') {
      services.log.warn({ channel: channel.name }, 'ChanIsAvail requires an argument (Technology/Resource)');
      return 'next';
    }
    const available: string[] = [];
    const statuses: number[] = [];
    for (const device of devices.split('&').map((entry) => entry.trim()).filter((entry) => entry !== '').slice(0, 64)) {
      const state = services.deviceState?.(device) ?? 'INVALID';
      statuses.push(DEVICE_STATE_NUMBERS.get(state) ?? 0);
      const unusable = state === 'INVALID' || state === 'UNAVAILABLE' || (options.includes('s') && state !== 'NOT_INUSE' && state !== 'UNKNOWN');
      if (!unusable) {
        available.push(device);
        if (!options.includes('a')) break;
      }
    }
    channel.setSystemVariable('AVAILCHAN', available.join('&'));
    channel.setSystemVariable('AVAILORIGCHAN', available.join('&'));
    channel.setSystemVariable('AVAILSTATUS', statuses.join('&'));
    // 0 when a device was found, else AST_CAUSE_NOSUCHDRIVER-like "unallocated" (the device is unknown or down).
    channel.setSystemVariable('AVAILCAUSECODE', available.length > 0 ? '0' : '3');
    return 'next';
  },
};

/** The tones PlayTones started, per channel, so StopPlayTones can end them. */
const tonePlaybacks = new WeakMap<Channel, Playback>();

/**
 * PlayTones(arg): a tone from the channel's tone zone (`dial`, `busy`, `ring`, ...) or an explicit
 * list (`440+480/2000,0/4000`), played in the background until StopPlayTones or another tone.
 */
export const playTones: DialplanApplication = {
  name: 'PlayTones',
  synopsis: 'Plays a tone (zone name like busy, or a tone list) in the background until StopPlayTones',
  execute(channel, _args, services, rawData) {
    const tone = rawData.trim();
    if (tone === '') {
      services.log.warn({ channel: channel.name }, 'PlayTones requires an argument (tone name or tone list)');
      return 'next';
    }
    const engine = services.playbacks;
    if (!engine) return 'next';
    const previous = tonePlaybacks.get(channel);
    if (previous) engine.stopPlayback(previous);
    // A name is looked up in the channel's tone zone (CHANNEL(tonezone)), as app_playtones does.
    const zone = channel.toneZone === undefined || tone.includes(';') ? '' : `;tonezone=${channel.toneZone}`;
    tonePlaybacks.set(channel, engine.playOnChannel(channel, { media: [`tone:${tone}${zone}`], language: channel.language, internal: true }));
    return 'next';
  },
};

export const stopPlayTones: DialplanApplication = {
  name: 'StopPlayTones',
  synopsis: 'Stops the tone PlayTones started',
  execute(channel, _args, services) {
    const playing = tonePlaybacks.get(channel);
    if (playing) {
      tonePlaybacks.delete(channel);
      services.playbacks?.stopPlayback(playing);
    }
    return 'next';
  },
};

/**
 * Milliwatt([options]): answers and plays the 0 dBm test tone, 1004 Hz (option `o`: 1000 Hz, as
 * older Asterisk), until the caller hangs up.
 */
export const milliwatt: DialplanApplication = {
  name: 'Milliwatt',
  synopsis: 'Answers and plays the 1004 Hz milliwatt test tone until hangup (option o: 1000 Hz)',
  async execute(channel, [options = ''], services): Promise<AppOutcome> {
    if (!channel.answered) channel.answer();
    const engine = services.playbacks;
    const frequency = options.includes('o') ? 1000 : 1004;
    const playback = engine?.playOnChannel(channel, { media: [`tone:${frequency}`], language: channel.language, internal: true });
    if (!channel.hangingUp) await new Promise<void>((resolve) => channel.once('hangup', () => resolve()));
    if (playback) engine?.stopPlayback(playback);
    return 'stop';
  },
};
