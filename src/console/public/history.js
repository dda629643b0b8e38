// @ts-check
// The History view: the last calls from the call records (admin/cdr, docs/cdr.md), searchable
// by number (on the server) and by any text (in the page); a call opens with all its CDR fields,
// the quality its channels ended with (admin/quality) and, while the server still keeps them, the
// SIP ladder of its dialogs (kept in the database for the latest calls); its timeline from the
// call's CEL events, and the live timeline when this page saw the call.
import { admin } from './ari.js';
import { showCelTimeline } from './cel-timeline.js';
import { $, el, row } from './dom.js';
import { showLadder, dialogOfChannel } from './ladder.js';
import { endedQuality, loadQuality, mosBadge } from './quality.js';
import { MAX_ROWS, state } from './state.js';

/** The CDR fields shown, in cdr.conf's order (quality is shown apart). */
const FIELDS = ['start', 'answer', 'end', 'clid', 'src', 'dst', 'dcontext', 'channel', 'dstchannel', 'lastapp', 'lastdata', 'duration', 'billsec', 'disposition', 'amaflags', 'accountcode', 'uniqueid', 'linkedid', 'userfield', 'peeraccount', 'sequence'];

let records = [];
/** Opens a channel's timeline (console.js), when the page knows the channel. */
let openTimeline = (_id) => {};

export function onOpenTimeline(open) {
  openTimeline = open;
}

export async function loadHistory() {
  const number = /** @type {HTMLInputElement} */ ($('history-number')).value.trim();
  const disposition = /** @type {HTMLSelectElement} */ ($('history-disposition')).value;
  const query = new URLSearchParams({ limit: '200' });
  if (number) query.set('number', number);
  if (disposition) query.set('disposition', disposition);
  const [answer] = await Promise.all([admin(`cdr?${query}`), loadQuality()]);
  records = answer.records ?? [];
  $('history-count').textContent = `(${answer.total} records${answer.total > records.length ? `, newest ${records.length} shown` : ''})`;
  renderHistory();
}

/** Quality of a channel that ended, by its uniqueid or, for a dstchannel, its name. */
function qualityOf(uniqueid, name) {
  const byId = endedQuality.get(uniqueid);
  if (byId) return byId;
  for (const figures of endedQuality.values()) if (name && figures.channel === name) return figures;
  return undefined;
}

/** The figures stored with the record (cdr_quality), else those the server still has in memory. */
const callQuality = (r) => r.quality ?? qualityOf(r.uniqueid, r.channel);
const dstQuality = (r) => r.dst_quality ?? qualityOf('', r.dstchannel);

const localTime = (iso) => (iso ? new Date(iso).toLocaleString() : '');

function renderHistory() {
  const rows = records.slice(0, MAX_ROWS).map((r) => {
    const worst = [callQuality(r), dstQuality(r)].filter(Boolean).sort((a, b) => a.mos - b.mos)[0];
    const tr = row([localTime(r.start), r.clid || r.src, r.dst, r.channel, r.dstchannel, r.disposition, String(r.duration), String(r.billsec), mosBadge(worst)], {
      'data-uniqueid': r.uniqueid,
      'data-disposition': r.disposition,
      'data-channel': r.channel,
      tabindex: '0',
      class: 'clickable',
    });
    tr.addEventListener('click', () => showCall(r).catch((err) => ($('history-detail').textContent = String(err))));
    tr.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') showCall(r).catch(() => {});
    });
    return tr;
  });
  /** @type {HTMLTableElement} */ ($('history')).tBodies[0].replaceChildren(...rows);
}

async function showCall(record) {
  const detail = $('history-detail');
  detail.hidden = false;
  const fields = el('dl', null, { class: 'fields', 'data-uniqueid': record.uniqueid });
  for (const name of FIELDS) {
    if (record[name] === undefined) continue;
    fields.append(el('dt', name), el('dd', String(record[name]), { 'data-field': name }));
  }
  const quality = el('div', null, { class: 'call-quality' });
  for (const [label, figures] of [[record.channel, callQuality(record)], [record.dstchannel, dstQuality(record)]]) {
    if (!figures) continue;
    const line = el('p', `${label}: ${figures.packets_received} packets in, ${figures.packets_sent} out, loss ${figures.loss_percent.toFixed(1)} %, jitter ${figures.jitter_ms.toFixed(1)} ms, RTT ${figures.rtt_ms.toFixed(1)} ms, MOS `, { 'data-quality': label });
    line.append(mosBadge(figures));
    quality.append(line);
  }
  const ladder = el('div', null, { class: 'ladder', id: 'history-ladder' });
  const message = el('pre', null, { class: 'sip-message', hidden: '' });
  const actions = el('div', null, { class: 'toolbar' });
  const known = [...state.channels].find(([, entry]) => entry.channel.name === record.channel)?.[0];
  if (known) {
    const timeline = el('button', 'Timeline', { type: 'button', 'data-action': 'history-timeline' });
    timeline.addEventListener('click', () => openTimeline(known));
    actions.append(timeline);
  }
  const celTimeline = el('div', null, { class: 'diagram', id: 'history-cel' });
  detail.replaceChildren(el('h3', `${record.clid || record.src} → ${record.dst}, ${record.disposition}`), actions, fields, quality, ladder, message, celTimeline);
  showCelTimeline(record.linkedid, celTimeline).catch((err) => celTimeline.replaceChildren(el('p', `CEL: ${err}`, { class: 'note' })));
  const names = [record.channel, record.dstchannel].filter((name) => /^PJSIP\//.test(name));
  const found = (await Promise.all(names.map((name) => dialogOfChannel(name).catch(() => undefined)))).filter(Boolean);
  if (found.length > 0) await showLadder(found.map((d) => d.id ?? d.call_id), ladder, message);
  else ladder.append(el('p', names.length ? 'The SIP messages of this call are no longer kept.' : 'No SIP leg in this call.', { class: 'note' }));
}
