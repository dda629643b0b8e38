// @ts-check
// The SIP view: the dialogs the server keeps messages of (admin/sip/ladders: calls,
// registrations, subscriptions …) and, for the chosen ones, their ladder — one lane per party,
// an arrow per message with its time, the full message on click (what sngrep shows). Several
// dialogs (the two legs of a call through Patchbay) are drawn on one ladder, Patchbay between.
import { admin } from './ari.js';
import { $, el, row } from './dom.js';
import { sequenceDiagram } from './svg.js';
import { MAX_ROWS } from './state.js';

/** The list as last fetched, newest first. */
let dialogs = [];
/** Call-IDs on the ladder now. */
let shown = [];

export async function loadDialogs() {
  const answer = await admin('sip/ladders?limit=200');
  dialogs = answer.dialogs ?? [];
  const note = answer.settings?.messagesPerDialog === 0 ? 'The ladder is off (console.sip_ladder_messages: 0).' : answer.skipped_dialogs ? `${answer.skipped_dialogs} dialogs were not recorded: the call rate was above console.sip_ladder_max_call_rate.` : '';
  $('sip-note').textContent = note;
  renderDialogs();
}

const timeOf = (iso) => String(iso).replace(/^.*T/, '').replace(/Z$/, '');
/** `alice` from `"Alice" <sip:alice@host>;tag=x`. */
const userOf = (header) => /sips?:([^@;>]+)@/.exec(String(header ?? ''))?.[1] ?? '';

function renderDialogs() {
  const rows = dialogs.slice(0, MAX_ROWS).map((d) => {
    const channels = (d.channels ?? []).map((c) => c.name).join(', ');
    const tr = row([timeOf(d.first), d.kind, userOf(d.from) || d.from, userOf(d.to) || d.to, channels, String(d.messages), d.last_message], { 'data-call-id': d.call_id, 'data-ladder-id': d.id, 'data-kind': d.kind, tabindex: '0', class: 'clickable' });
    if (shown.includes(d.id)) tr.classList.add('selected');
    tr.addEventListener('click', () => showLadder([d.id]).catch(showLadderError));
    tr.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') showLadder([d.id]).catch(showLadderError);
    });
    return tr;
  });
  /** @type {HTMLTableElement} */ ($('sip-dialogs')).tBodies[0].replaceChildren(...rows);
}

function showLadderError(err) {
  $('sip-ladder').replaceChildren(el('p', err instanceof Error ? err.message : String(err), { class: 'error' }));
}

/** The ladder of a channel's dialog (by the channel's id or name), if the server has it. */
export async function dialogOfChannel(idOrName) {
  const answer = await admin(`sip/ladders?channel=${encodeURIComponent(idOrName)}`);
  return answer.dialogs?.[0];
}

/** Draws the ladder of these dialogs into `target` (the SIP view's by default). */
export async function showLadder(callIds, target = $('sip-ladder'), detail = $('sip-message')) {
  shown = callIds;
  const fetched = (await Promise.all(callIds.map((id) => admin(`sip/ladders/${encodeURIComponent(id)}`).catch(() => null)))).filter(Boolean);
  if (fetched.length === 0) {
    target.replaceChildren(el('p', 'No SIP messages kept for this call.', { class: 'note' }));
    return;
  }
  // Lanes: the far parties of the first dialog, Patchbay, then those of the others.
  const lanes = [];
  const laneOf = new Map();
  const partyName = (dialog, peer) => {
    const first = dialog.messages[0];
    const user = first?.direction === 'in' ? userOf(dialog.from) : userOf(dialog.to);
    return `${user ? `${user} ` : ''}${peer.replace(/^\S+ /, '')}`;
  };
  const addLane = (key, name) => {
    if (!laneOf.has(key)) {
      laneOf.set(key, lanes.length);
      lanes.push(name);
    }
  };
  fetched.forEach((dialog, index) => {
    if (index === 1 || (index === 0 && fetched.length === 1)) addLane('patchbay', 'Patchbay');
    for (const m of dialog.messages) addLane(m.peer, partyName(dialog, m.peer));
  });
  addLane('patchbay', 'Patchbay');
  const messages = fetched.flatMap((dialog) => dialog.messages).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const steps = messages.map((m, index) => {
    const peer = laneOf.get(m.peer);
    const own = laneOf.get('patchbay');
    const [from, to] = m.direction === 'in' ? [peer, own] : [own, peer];
    return {
      from,
      to,
      label: m.summary,
      time: timeOf(m.at),
      kind: /^[1]/.test(m.summary) ? 'provisional' : /^[2]/.test(m.summary) ? 'success' : /^[3-6]/.test(m.summary) ? 'failure' : 'request',
      data: { 'data-summary': m.summary, 'data-from': lanes[from], 'data-to': lanes[to], 'data-at': m.at },
      onSelect: () => {
        detail.textContent = `${m.direction === 'in' ? 'Received from' : 'Sent to'} ${m.peer} at ${m.at}\n\n${m.text.replace(/\r\n/g, '\n')}`;
        detail.hidden = false;
        for (const node of target.querySelectorAll('.step.chosen')) node.classList.remove('chosen');
        target.querySelector(`.step[data-index="${index}"]`)?.classList.add('chosen');
      },
    };
  });
  target.replaceChildren(sequenceDiagram(lanes, steps));
  renderDialogs();
}
