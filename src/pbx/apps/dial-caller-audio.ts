// What the caller hears of Dial() itself while the callees ring (app_dial, before it waits for an
// answer): with m, music on hold and a progress indication (a SIP caller gets a 183 and hears the
// music as early media); with r(tone), that tone of the caller's zone and progress (a tone the zone
// lacks is named and the caller is rung instead); with r, ringing at once. A caller so entertained
// is told no callee's ringing and gets no callee's early media; with r, no callee's progress either.
import type { Channel } from '../../core/channels/channel.ts';
import type { Playback } from '../../core/playback/playback.ts';
import { defaultToneZone, getToneZone } from '../../media/tonezones.ts';
import type { PbxServices } from '../application-services.ts';

export interface CallerAudio {
  /** r was given: the caller's ringing is Dial's own, and callees' progress is not passed on. */
  readonly ringBack: boolean;
  /** The caller hears Dial's own music or tone: callees' ringing is not passed on, no early media. */
  readonly entertained: boolean;
  /** Ends what Dial started for the caller (at the answer, or as Dial ends unanswered). */
  stop(): void;
}

/** Starts the caller's audio for options m and r; nothing when neither was given. */
export function startCallerAudio(channel: Channel, services: PbxServices, options: ReadonlyMap<string, string>): CallerAudio {
  const music = options.get('m');
  if (music !== undefined) {
    const moh = services.musicOnHold;
    let started = false;
    try {
      if (!moh) throw new Error('music on hold is not part of this server');
      moh.start(channel, music || undefined);
      started = true;
    } catch (err) {
      services.log.warn({ channel: channel.name, class: music || 'default', err }, 'Dial: unable to start music on hold for option m');
    }
    channel.indicate('progress');
    return {
      ringBack: false,
      entertained: true,
      stop: () => {
        if (started && !channel.destroyed) moh?.stop(channel);
        started = false;
      },
    };
  }
  const ring = options.get('r');
  if (ring === undefined) return { ringBack: false, entertained: false, stop: () => {} };
  const tone = ring.trim();
  const playback = tone === '' ? undefined : startTone(channel, services, tone);
  if (playback) {
    channel.indicate('progress');
    return {
      ringBack: true,
      entertained: true,
      stop: () => {
        if (!playback.finished) services.playbacks?.stopPlayback(playback);
      },
    };
  }
  // Ringing at once, heard in band by an answered caller, and stopped when Dial() ends.
  channel.indicate('ringing');
  return {
    ringBack: true,
    entertained: tone !== '',
    stop: () => {
      if (!channel.hangingUp) channel.indicate('stop');
    },
  };
}

/** r(tone): the tone by that name in the caller's zone (app_dial plays names only, not tone lists). */
function startTone(channel: Channel, services: PbxServices, tone: string): Playback | undefined {
  const country = channel.toneZone ?? defaultToneZone();
  const zone = getToneZone(country);
  const engine = services.playbacks;
  if (!engine || !zone || !Object.hasOwn(zone.tones, tone.toLowerCase())) {
    services.log.warn({ channel: channel.name, tone, zone: country }, `Dial: unable to start playtone '${tone}'`);
    return undefined;
  }
  return engine.playOnChannel(channel, { media: [`tone:${tone};tonezone=${country}`], language: channel.language, internal: true });
}
