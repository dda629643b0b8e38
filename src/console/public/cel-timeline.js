// @ts-check
// A finished call's timeline in History, built from its CEL events (admin/cel?linkedid=, see
// docs/cdr.md) rather than from events this page saw: it works for calls placed before the page
// was opened, and after a restart. A lane per channel (in the order they started) and one per
// bridge they entered; BRIDGE_ENTER/BRIDGE_EXIT are arrows between a channel and its bridge,
// every other event a dot on its channel's lane.
import { admin } from './ari.js';
import { el } from './dom.js';
import { sequenceDiagram } from './svg.js';

/** Events drawn (the API pages at 1000; a call rarely has more than a few dozen). */
const MAX_EVENTS = 500;

/** The bridge an event names in its `extra` JSON (BRIDGE_ENTER/EXIT), if any. */
function bridgeOf(event) {
  if (event.eventtype !== 'BRIDGE_ENTER' && event.eventtype !== 'BRIDGE_EXIT') return '';
  try {
    const extra = JSON.parse(event.extra || '{}');
    return typeof extra.bridge_id === 'string' ? extra.bridge_id : '';
  } catch {
    return '';
  }
}

function label(event) {
  switch (event.eventtype) {
    case 'APP_START':
    case 'APP_END':
      return `${event.eventtype} ${event.appname}(${event.appdata})`;
    case 'HANGUP': {
      try {
        const cause = JSON.parse(event.extra || '{}').hangupcause;
        return cause === undefined ? 'HANGUP' : `HANGUP cause ${cause}`;
      } catch {
        return 'HANGUP';
      }
    }
    case 'USER_DEFINED':
      return `USER_DEFINED ${event.userdeftype}`;
    default:
      return event.eventtype;
  }
}

/**
 * Lanes and steps of a call's CEL events.
 * @param {Array<Record<string, string>>} events
 */
function celDiagram(events) {
  const lanes = [];
  const index = new Map();
  const lane = (kind, name) => {
    const key = `${kind}:${name}`;
    if (!index.has(key)) {
      index.set(key, lanes.length);
      lanes.push(kind === 'bridge' ? `bridge ${name.slice(0, 8)}` : name);
    }
    return index.get(key);
  };
  // Channels first, in the order they appear, then the bridges: lanes read left to right.
  for (const event of events) if (event.channame) lane('channel', event.channame);
  for (const event of events) {
    const bridge = bridgeOf(event);
    if (bridge) lane('bridge', bridge);
  }
  const steps = events.slice(0, MAX_EVENTS).map((event) => {
    const channel = lane('channel', event.channame || '?');
    const bridge = bridgeOf(event);
    const time = String(event.eventtime).replace(/^.*T/, '').replace(/Z$/, '');
    if (bridge) {
      const target = lane('bridge', bridge);
      const [from, to] = event.eventtype === 'BRIDGE_ENTER' ? [channel, target] : [target, channel];
      return { from, to, label: label(event), time, kind: 'event', data: { 'data-event': event.eventtype } };
    }
    return { from: channel, to: channel, label: label(event).slice(0, 60), time, kind: 'event', data: { 'data-event': event.eventtype } };
  });
  return { lanes, steps };
}

/** Draws the call's CEL timeline into `into`, or says why there is none. */
export async function showCelTimeline(linkedid, into) {
  if (!linkedid) return;
  const answer = await admin(`cel?${new URLSearchParams({ linkedid, limit: String(MAX_EVENTS) })}`);
  const events = answer.events ?? [];
  if (events.length === 0) {
    into.replaceChildren(el('p', 'No channel events (CEL) for this call: cel.enabled is off, the event types are not in cel.events, or they are past cel.retention_days.', { class: 'note' }));
    return;
  }
  const { lanes, steps } = celDiagram(events);
  into.replaceChildren(el('h4', `Timeline from CEL (${events.length} events)`), sequenceDiagram(lanes, steps));
}
