// Pickup([exten[@context][&exten2[@context2]...]]) and PickupChan(channel[&channel2...][,p]), as
// app_directed_pickup does them: the channel takes the place of a ringing one (core/channels/pickup.ts).
// Pickup() without targets picks the oldest ringing channel whose call groups meet the channel's
// pickup groups; `exten@PICKUPMARK` the one whose PICKUPMARK variable is `exten`; `exten[@context]`
// one ringing at that extension (the current context when none is given). PickupChan takes channel
// names (`PJSIP/bob` finds `PJSIP/bob-00000001`; option p: the names are prefixes) or uniqueids.
// As Asterisk, neither sets a variable: after a pickup the dialplan run of the picker is over
// (Asterisk's picker becomes a zombie; here the run waits for the call to end, then stops), and
// when nothing could be picked up the dialplan goes on at the next priority.
import type { Channel } from '../../core/channels/channel.ts';
import { findByExten, findByGroup, findByMark, findByName, pickUp } from '../../core/channels/pickup.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import type { PbxServices } from '../application-services.ts';

/** Targets one Pickup() or PickupChan() tries at most: the list comes from the dialplan's data. */
const MAX_TARGETS = 32;

/** The picker is now in the ringing channel's call: its dialplan run ends when the call does. */
function untilHangup(channel: Channel): Promise<AppOutcome> {
  if (channel.hangingUp) return Promise.resolve('stop');
  return new Promise((resolve) => channel.once('hangup', () => resolve('stop')));
}

function tryTarget(channel: Channel, services: PbxServices, target: Channel | undefined): boolean {
  if (!target) return false;
  services.log.info({ channel: channel.name, target: target.name }, `${target.name} pickup by ${channel.name}`);
  return pickUp(channel, target);
}

const targetsOf = (text: string): string[] =>
  text
    .split('&')
    .map((target) => target.trim())
    .filter((target) => target !== '')
    .slice(0, MAX_TARGETS);

export const pickup: DialplanApplication = {
  name: 'Pickup',
  synopsis: 'Picks up a ringing call: of the pickup groups (no argument), at exten[@context], or marked exten@PICKUPMARK',
  execute(channel, _args, services, rawData): Promise<AppOutcome> | AppOutcome {
    if (channel.hangingUp) return 'stop';
    const channels = services.channels.list();
    if (rawData.trim() === '') {
      const target = findByGroup(channel, channels);
      if (target) services.log.info({ channel: channel.name, target: target.name }, `pickup ${target.name} attempt by ${channel.name}`);
      return target && pickUp(channel, target) ? untilHangup(channel) : 'next';
    }
    for (const spec of targetsOf(rawData)) {
      const at = spec.indexOf('@');
      const exten = at < 0 ? spec : spec.slice(0, at);
      const context = at < 0 ? '' : spec.slice(at + 1).trim();
      const target =
        context.toUpperCase() === 'PICKUPMARK' ? findByMark(channel, channels, exten) : findByExten(channel, channels, exten, context || channel.location.context);
      if (tryTarget(channel, services, target)) return untilHangup(channel);
      services.log.info({ channel: channel.name }, `No target channel found for ${exten.slice(0, 80)}@${(context || channel.location.context).slice(0, 80)}.`);
    }
    return 'next';
  },
};

export const pickupChan: DialplanApplication = {
  name: 'PickupChan',
  synopsis: 'Picks up a ringing channel by name or uniqueid (option p: names are prefixes)',
  execute(channel, [names, options], services): Promise<AppOutcome> | AppOutcome {
    if (channel.hangingUp) return 'stop';
    if (!names || names.trim() === '') {
      services.log.warn({ channel: channel.name }, 'PickupChan requires an argument (channel)!');
      return 'next';
    }
    const partial = (options ?? '').includes('p');
    const channels = services.channels.list();
    for (const name of targetsOf(names)) {
      if (tryTarget(channel, services, findByName(channel, channels, name, partial))) return untilHangup(channel);
      services.log.info({ channel: channel.name }, `No target channel found for ${name.slice(0, 80)}.`);
    }
    return 'next';
  },
};
