// @ts-check
// The timeline of the selected channel: its events and those of its Local half, dialled peers
// and the bridges any of them joined, one lane each, filtered by the page's filter box; and its
// export as JSON.
import { $, el } from './dom.js';
import { MAX_ROWS, state } from './state.js';
import { sequenceDiagram } from './svg.js';

/** Steps drawn in the sequence diagram (the table below it holds up to MAX_ROWS). */
const MAX_DIAGRAM_STEPS = 300;

/** The selected channel with its Local half, dialled peers, and the bridges any of them joined. */
function timelineLanes() {
  const channels = new Set([state.selected]);
  for (const peer of state.related.get(state.selected) ?? []) channels.add(peer);
  const bridges = new Set();
  for (const item of state.log) {
    if (item.channels.some((c) => channels.has(c))) for (const b of item.bridges) if (!state.own.has(b)) bridges.add(b);
  }
  return { channels, bridges };
}

function timelineEvents() {
  const { channels, bridges } = timelineLanes();
  const filter = /** @type {HTMLInputElement} */ ($('timeline-filter')).value.trim().toLowerCase();
  return state.log.filter((item) => {
    const involved = item.channels.some((c) => channels.has(c)) || item.bridges.some((b) => bridges.has(b));
    if (!involved) return false;
    return !filter || item.type.toLowerCase().includes(filter) || JSON.stringify(item.event).toLowerCase().includes(filter);
  });
}

function laneName(kind, id) {
  if (kind === 'bridge') return `bridge ${state.bridges.get(id)?.name || id.slice(0, 8)}`;
  return state.channels.get(id)?.channel.name ?? id;
}

export function renderTimeline() {
  if (!state.selected || $('timeline-panel').hidden) return;
  $('timeline-title').textContent = laneName('channel', state.selected);
  const { channels, bridges } = timelineLanes();
  const lanes = [...[...channels].map((id) => ['channel', id]), ...[...bridges].map((id) => ['bridge', id])];
  const table = /** @type {HTMLTableElement} */ ($('timeline'));
  const head = el('tr');
  head.append(el('th', 'Time'), el('th', 'Event'));
  for (const [kind, id] of lanes) head.append(el('th', laneName(kind, id)));
  head.append(el('th', 'Details'));
  table.tHead.replaceChildren(head);
  const rows = [];
  for (const item of timelineEvents()) {
    const tr = el('tr', null, { 'data-event': item.type });
    tr.append(el('td', item.at.replace(/^.*T/, ''), { class: 'mono' }), el('td', item.type));
    for (const [kind, id] of lanes) {
      const touched = kind === 'channel' ? item.channels.includes(id) : item.bridges.includes(id);
      tr.append(el('td', touched ? '●' : '│', { class: 'lane' }));
    }
    tr.append(el('td', summary(item.event)));
    rows.push(tr);
  }
  table.tBodies[0].replaceChildren(...rows.slice(-MAX_ROWS));
  $('timeline-diagram').replaceChildren(timelineDiagram(lanes));
}

/**
 * The same events as a sequence diagram: a lifeline per channel and bridge; an event that
 * concerns one lane is a dot on it, one that concerns several an arrow from the first to the last
 * (a channel entering a bridge, a Dial from caller to peer).
 */
function timelineDiagram(lanes) {
  const index = new Map(lanes.map(([kind, id], i) => [`${kind}:${id}`, i]));
  const steps = [];
  for (const item of timelineEvents().slice(-MAX_DIAGRAM_STEPS)) {
    const touched = [...item.channels.map((id) => index.get(`channel:${id}`)), ...item.bridges.map((id) => index.get(`bridge:${id}`))].filter((i) => i !== undefined);
    if (touched.length === 0) continue;
    const text = summary(item.event);
    // A Dial goes from its caller to its peer, whatever order the event lists them in.
    if (item.type === 'Dial' && item.event.caller && item.event.peer) {
      const [caller, peer] = [index.get(`channel:${item.event.caller.id}`), index.get(`channel:${item.event.peer.id}`)];
      if (caller !== undefined && peer !== undefined) touched.splice(0, touched.length, caller, peer);
    }
    steps.push({ from: touched[0], to: touched[touched.length - 1], label: `${item.type}${text ? ` ${text}` : ''}`.slice(0, 60), time: item.at.replace(/^.*T/, '').replace(/(Z|[+-]\d\d:?\d\d)$/, ''), kind: 'event', data: { 'data-event': item.type } });
  }
  return sequenceDiagram(lanes.map(([kind, id]) => laneName(kind, id)), steps);
}

function summary(event) {
  switch (event.type) {
    case 'ChannelStateChange':
      return event.channel.state;
    case 'ChannelDialplan':
      return `${event.dialplan_app}(${event.dialplan_app_data})`;
    case 'ChannelVarset':
      // Stasis() clears STASISSTATUS as it starts (app_stasis): the line that shows a channel
      // entering its application, as no ChannelDialplan does when the position stays the same.
      if (event.variable === 'STASISSTATUS' && event.value === '' && event.channel?.dialplan?.app_name === 'Stasis') return `${event.variable}= entering Stasis(${event.channel.dialplan.app_data ?? ''})`;
      return `${event.variable}=${event.value}`;
    case 'ChannelDtmfReceived':
      return event.digit;
    case 'Dial':
      return `${event.dialstatus || 'dialling'} ${event.dialstring ?? ''}`;
    case 'StasisStart':
    case 'StasisEnd':
      return event.application;
    case 'ChannelHangupRequest':
    case 'ChannelDestroyed':
      return `cause ${event.cause}${event.cause_txt ? ` ${event.cause_txt}` : ''}`;
    case 'PlaybackStarted':
    case 'PlaybackFinished':
      return event.playback.media_uri;
    case 'RecordingStarted':
    case 'RecordingFinished':
      return event.recording.name;
    default:
      return '';
  }
}

export function exportTimeline() {
  const data = { channel: state.selected, exported: new Date().toISOString(), events: timelineEvents().map((item) => ({ at: item.at, ...item.event })) };
  const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }));
  const link = el('a', null, { href: url, download: `timeline-${state.selected}.json` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
