// @ts-check
// The Quality view: every live channel that carries RTP with its packets, loss, jitter, RTCP
// round-trip time and estimated MOS (the server's admin/quality, an E-model from those figures),
// coloured, sortable, worst MOS first by default ("worst calls now").
import { admin } from './ari.js';
import { $, el, row } from './dom.js';
import { MAX_ROWS } from './state.js';

const COLUMNS = [
  ['channel', 'Channel'],
  ['codec', 'Codec'],
  ['packets_received', 'Packets in'],
  ['packets_sent', 'Packets out'],
  ['loss_percent', 'Loss %'],
  ['jitter_ms', 'Jitter ms'],
  ['rtt_ms', 'RTT ms'],
  ['mos', 'MOS'],
];

let live = [];
/** Ended channels' last figures (uniqueid → figures), what History shows. */
export const endedQuality = new Map();
let sortKey = 'mos';
let ascending = true;

export async function loadQuality() {
  const answer = await admin('quality?ended=2000');
  live = answer.live ?? [];
  endedQuality.clear();
  for (const figures of answer.ended ?? []) endedQuality.set(figures.uniqueid, figures);
  renderQuality();
}

/** A MOS as a coloured badge (good ≥ 4.0, fair ≥ 3.6, poor ≥ 3.1, else bad). */
export function mosBadge(figures) {
  if (!figures) return el('span', '');
  const badge = el('span', Number(figures.mos).toFixed(2), { class: `mos mos-${figures.rating}`, title: `R ${figures.r}, ${figures.rating}` });
  return badge;
}

function renderQuality() {
  const head = el('tr');
  for (const [key, label] of COLUMNS) {
    const th = el('th');
    const sort = el('button', `${label}${key === sortKey ? (ascending ? ' ▲' : ' ▼') : ''}`, { type: 'button', class: 'sort', 'data-sort': key });
    sort.addEventListener('click', () => {
      ascending = key === sortKey ? !ascending : key === 'mos';
      sortKey = key;
      renderQuality();
    });
    th.append(sort);
    head.append(th);
  }
  const table = /** @type {HTMLTableElement} */ ($('quality'));
  table.tHead.replaceChildren(head);
  const sorted = [...live].sort((a, b) => {
    const [x, y] = [a[sortKey], b[sortKey]];
    const order = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
    return ascending ? order : -order;
  });
  const rows = sorted.slice(0, MAX_ROWS).map((q) =>
    row([q.channel, q.codec, String(q.packets_received), String(q.packets_sent), q.loss_percent.toFixed(1), q.jitter_ms.toFixed(1), q.rtt_ms.toFixed(1), mosBadge(q)], {
      'data-channel': q.channel,
      'data-mos': String(q.mos),
      'data-loss': String(q.loss_percent),
      'data-rating': q.rating,
    }),
  );
  table.tBodies[0].replaceChildren(...rows);
  $('quality-count').textContent = `(${live.length} with RTP)`;
}
