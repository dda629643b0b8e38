// @ts-check
// The timeline of the selected channel: its events and those of its Local half, dialled peers
// and the bridges any of them joined, one lane each, filtered by the page's filter box; and its
// export as JSON.
import { $, el } from './dom.js';
import { MAX_ROWS, state } from './state.js';

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
}

function summary(event) {
  switch (event.type) {
    case 'ChannelStateChange':
      return event.channel.state;
    case 'ChannelDialplan':
      return `${event.dialplan_app}(${event.dialplan_app_data})`;
    case 'ChannelVarset':
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
