// Call pickup (Asterisk's main/pickup.c and the finders of app_directed_pickup.c): a channel takes
// the place of a ringing one. Asterisk masquerades the picker into the ringing channel; Patchbay's
// core has no masquerade, so whoever rings a channel (Dial()) offers it for pickup here with what
// to do when someone picks it up: Dial() treats the picker as the callee that answered and cancels
// the ringing channel as answered elsewhere (cause 26). Only offered channels can be picked up.
import type { Channel } from './channel.ts';
import { groupsMeet } from './call-groups.ts';

/** Connects `picker` where the ringing channel was; false when the call is gone or already answered. */
type PickupHandler = (picker: Channel) => boolean;

const offers = new WeakMap<Channel, PickupHandler>();
/** Channels a pickup is under way for (Asterisk's pickup-active datastore): a second picker loses. */
const picking = new WeakSet<Channel>();

/** `target` rings on behalf of whoever calls this; returns the withdrawal (answered, gone). */
export function offerPickup(target: Channel, handler: PickupHandler): () => void {
  offers.set(target, handler);
  return () => {
    if (offers.get(target) === handler) offers.delete(target);
  };
}

/** ast_can_pickup: offered, ringing (or still down: a phone that sends 183 and no 180), not already being picked up. */
function canPickup(target: Channel): boolean {
  if (!offers.has(target) || target.hangingUp || picking.has(target)) return false;
  return target.state === 'Ringing' || target.state === 'Ring' || target.state === 'Down';
}

/** The oldest ringing channel whose call groups meet the picker's pickup groups (ast_pickup_find_by_group). */
export function findByGroup(picker: Channel, channels: Iterable<Channel>): Channel | undefined {
  let oldest: Channel | undefined;
  for (const target of channels) {
    if (target === picker || !canPickup(target) || !groupsMeet(picker.groups, target.groups)) continue;
    if (!oldest || target.creationtime.getTime() < oldest.creationtime.getTime()) oldest = target;
  }
  return oldest;
}

/** A ringing channel at `exten`@`context` (Dial() gives its callees the caller's extension; the context is their technology's). */
export function findByExten(picker: Channel, channels: Iterable<Channel>, exten: string, context: string): Channel | undefined {
  for (const target of channels) {
    if (target !== picker && target.location.exten === exten && target.location.context === context && canPickup(target)) return target;
  }
  return undefined;
}

/** A ringing channel whose PICKUPMARK variable is `mark` (case-insensitive, as app_directed_pickup). */
export function findByMark(picker: Channel, channels: Iterable<Channel>, mark: string): Channel | undefined {
  const wanted = mark.toLowerCase();
  for (const target of channels) {
    if (target === picker || !canPickup(target)) continue;
    const value = target.getVariable('PICKUPMARK') ?? target.getVariable('_PICKUPMARK') ?? target.getVariable('__PICKUPMARK');
    if (value !== undefined && value.toLowerCase() === wanted) return target;
  }
  return undefined;
}

/**
 * A ringing channel by name or uniqueid (PickupChan): a name is a case-insensitive prefix; without
 * `partial`, a name with no `-` is matched as `name-` (PJSIP/bob finds PJSIP/bob-00000001, not
 * PJSIP/bobby-…). Then the uniqueid, exactly but for case.
 */
export function findByName(picker: Channel, channels: readonly Channel[], name: string, partial: boolean): Channel | undefined {
  const prefix = (partial || name.includes('-') ? name : `${name}-`).toLowerCase();
  const byName = channels.find((target) => target !== picker && target.name.toLowerCase().startsWith(prefix) && canPickup(target));
  if (byName) return byName;
  const id = name.toLowerCase();
  return channels.find((target) => target !== picker && target.id.toLowerCase() === id && canPickup(target));
}

/**
 * ast_do_pickup: the picker learns whom it now talks to (the ringing channel's connected line: the
 * caller), is answered, and takes the ringing channel's place through its offer's handler. False
 * when the target cannot be picked up any more.
 */
export function pickUp(picker: Channel, target: Channel): boolean {
  const handler = offers.get(target);
  if (!handler || !canPickup(target) || picker.hangingUp) return false;
  picking.add(target);
  try {
    const { name, number } = target.connected;
    if (picker.connected.name !== name || picker.connected.number !== number) picker.setConnected({ name, number });
    if (!picker.answered) picker.answer();
    return handler(picker);
  } finally {
    picking.delete(target);
  }
}
