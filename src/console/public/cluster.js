// @ts-check
// The channels table's Member column on a cluster member (docs/cluster.md): which member each
// channel is on. ARI's channel JSON has no such field, so the page asks the server's admin route
// (admin/cluster/channels: every member's channel ids) with each snapshot, and places channels
// that appear later by their events' asterisk_id (the owning member's server id). On a single
// server the route answers 404 and the column stays hidden.
import { admin } from './ari.js';

/** Most channels remembered by the asterisk_id of their events (the oldest are forgotten first). */
const MAX_ORIGINS = 5000;

/** @type {{ channels: Record<string, string>, members: Record<string, string> } | null} null: not a cluster member */
let places = null;
/** channel id → asterisk_id of the last event about it */
const origins = new Map();

/** Asks which member holds each channel; resolves whether the server is a cluster member. */
export async function loadChannelPlaces() {
  try {
    const answer = await admin('cluster/channels');
    places = answer && typeof answer === 'object' ? { channels: answer.channels ?? {}, members: answer.members ?? {} } : null;
  } catch {
    places = null;
  }
  return places !== null;
}

/** Notes the asterisk_id of an event about a channel. */
export function noteChannelOrigin(channelId, asteriskId) {
  if (places === null || typeof asteriskId !== 'string') return;
  origins.delete(channelId);
  origins.set(channelId, asteriskId);
  if (origins.size > MAX_ORIGINS) origins.delete(origins.keys().next().value);
}

/** Whether the Member column is shown. */
export function clustered() {
  return places !== null;
}

/** The member a channel is on, '' when not known. */
export function memberOf(channelId) {
  if (places === null) return '';
  const listed = places.channels[channelId];
  if (typeof listed === 'string') return listed;
  const origin = origins.get(channelId);
  return (origin !== undefined && places.members[origin]) || '';
}
