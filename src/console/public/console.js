// @ts-check
// Patchbay's web console: a single-page ARI client written against the public ARI only (REST and
// the events WebSocket, plus media over WebSocket for listening in), with no framework, so it also
// serves as a reference client. See docs/console.md.
//
// Security notes: the page embeds no credentials; the user and password typed in the sign-in form
// are kept in sessionStorage (this tab only) and sent as HTTP Basic on fetch and as `api_key` on
// the events WebSocket, which is what ARI offers browsers. Every value from the server is put in
// the page with textContent (never innerHTML), and every list the server can grow is bounded.
import { ari, ariUrl, AriRequestError } from './ari.js';
import { listen, listenStats } from './listen.js';
import { $, duration, el, row } from './dom.js';
import { bridgeName, channelName, labelled, MAX_EVENTS, MAX_GONE_CHANNELS, MAX_ROWS, randomId, state, STORAGE_KEY, targetName } from './state.js';
import { exportTimeline, renderTimeline } from './timeline.js';
import { originate, playStored, startRecording, stopRecording } from './actions.js';
import { applySearch, currentView, showView, startViews } from './views.js';
import { onOpenTimeline } from './history.js';
import { dialogOfChannel, showLadder } from './ladder.js';
import { loadServerInfo, loadStoredRecordings, renderServerInfo, storedCells } from './server-info.js';
import { clustered, loadChannelPlaces, memberOf, noteChannelOrigin } from './cluster.js';

// The test and curious users can read the listen-in figures here.
/** @type {any} */ (window).patchbayConsole = { state, listenStats };

function showError(err) {
  $('error').textContent = err instanceof Error ? err.message : String(err);
}

/** Runs a user action, showing its failure in the page. */
function act(action) {
  return async () => {
    showError('');
    try {
      await action();
    } catch (err) {
      showError(err);
    }
  };
}

// ---- Sign in ------------------------------------------------------------------------------

async function signIn(user, password) {
  state.user = user;
  state.password = password;
  // GET is allowed to every user: it checks the password.
  await ari('GET', 'asterisk/info', { only: 'system' });
  // Whether this user may write: ARI answers 403 to a read-only user's write before looking at
  // its target, and 404 to a read-write user for an id that cannot exist.
  try {
    await ari('DELETE', `playbacks/console-write-probe-${randomId()}`);
    state.canWrite = true;
  } catch (err) {
    state.canWrite = !(err instanceof AriRequestError && err.status === 403);
  }
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ user, password }));
  $('login-view').hidden = true;
  $('main-view').hidden = false;
  $('logout').hidden = false;
  $('tabs').hidden = false;
  $('who').textContent = `${user}${state.canWrite ? '' : ' (read-only)'}`;
  $('read-only-note').hidden = state.canWrite;
  document.body.classList.toggle('read-only', !state.canWrite);
  for (const button of document.querySelectorAll('button.act')) /** @type {HTMLButtonElement} */ (button).disabled = !state.canWrite;
  connectEvents();
}

function signOut() {
  sessionStorage.removeItem(STORAGE_KEY);
  for (const listen of state.listens.values()) listen.stop();
  if (state.events) {
    state.events.onclose = null;
    state.events.close();
  }
  location.reload();
}

// ---- Events -------------------------------------------------------------------------------

let reconnectDelay = 1000;

function connectEvents() {
  const url = ariUrl('events', { app: state.app, subscribeAll: 'true', api_key: `${state.user}:${state.password}` });
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const socket = new WebSocket(url);
  state.events = socket;
  setStatus('connecting', '');
  socket.onopen = () => {
    reconnectDelay = 1000;
    setStatus('live', 'live');
    // Subscribed first, then the current state: nothing that happens in between is missed.
    loadSnapshot().catch(showError);
  };
  socket.onmessage = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    if (event && typeof event.type === 'string') onEvent(event);
  };
  socket.onclose = () => {
    setStatus('disconnected, retrying', 'down');
    setTimeout(connectEvents, reconnectDelay);
    reconnectDelay = Math.min(reconnectDelay * 2, 30000);
  };
}

function setStatus(text, kind) {
  const status = $('status');
  status.textContent = text;
  status.className = `status ${kind}`;
}

async function loadSnapshot() {
  // Known before asking: what of it the answers lack ended while the page was disconnected.
  // (What appears meanwhile through events is newer than the answers and is kept.)
  const channelsBefore = [...state.channels].filter(([, entry]) => !entry.gone).map(([id]) => id);
  const bridgesBefore = [...state.bridges.keys()];
  const asked = state.eventCount;
  const [channels, bridges, endpoints, applications] = await Promise.all([
    ari('GET', 'channels'),
    ari('GET', 'bridges'),
    ari('GET', 'endpoints'),
    ari('GET', 'applications'),
  ]);
  const liveChannels = new Set(channels.map((c) => c.id));
  for (const id of channelsBefore) if (!liveChannels.has(id)) channelGone(id);
  for (const channel of channels) {
    const known = state.channels.get(channel.id);
    if (!known || known.updatedAt <= asked) upsertChannel(channel, asked);
  }
  const liveBridges = new Set(bridges.map((b) => b.id));
  for (const id of bridgesBefore) if (!liveBridges.has(id)) state.bridges.delete(id);
  for (const bridge of bridges) if ((state.bridgeUpdatedAt.get(bridge.id) ?? 0) <= asked) state.bridges.set(bridge.id, bridge);
  for (const endpoint of endpoints) state.endpoints.set(`${endpoint.technology}/${endpoint.resource}`, endpoint);
  for (const application of applications) state.applications.set(application.name, application);
  // Other applications' channels already in Stasis: their subscriptions are in the list above.
  for (const channel of channels) if (channel.dialplan?.app_name === 'Stasis') noteStasisApp(channel.id, String(channel.dialplan.app_data ?? '').split(',')[0]);
  await Promise.all([loadStored(), loadServerInfo(), loadChannelPlaces()]);
  markDirty();
}

async function loadStored() {
  await loadStoredRecordings();
  markDirty();
}

function upsertChannel(channel, updatedAt = state.eventCount) {
  const known = state.channels.get(channel.id);
  if (known) {
    known.channel = channel;
    known.updatedAt = updatedAt;
    return known;
  }
  const entry = { channel, app: '', gone: false, talking: false, codec: '', updatedAt };
  state.channels.set(channel.id, entry);
  relateLocalPair(channel);
  fetchCodec(entry);
  return entry;
}

/** A Local channel's two halves (`Local/x@y-00000001;1` and `;2`) belong on one timeline. */
function relateLocalPair(channel) {
  const match = /^(Local\/.*);([12])$/.exec(channel.name);
  if (!match) return;
  const otherName = `${match[1]};${match[2] === '1' ? '2' : '1'}`;
  for (const [id, entry] of state.channels) if (entry.channel.name === otherName) relate(id, channel.id);
}

function relate(a, b) {
  if (a === b) return;
  if (!state.related.has(a)) state.related.set(a, new Set());
  if (!state.related.has(b)) state.related.set(b, new Set());
  state.related.get(a).add(b);
  state.related.get(b).add(a);
}

/** The channel's audio format, as Asterisk's CHANNEL(audionativeformat) reads it; asked once. */
function fetchCodec(entry) {
  ari('GET', `channels/${encodeURIComponent(entry.channel.id)}/variable`, { variable: 'CHANNEL(audionativeformat)' })
    .then((answer) => {
      entry.codec = answer && answer.value ? answer.value : '';
      markDirty();
    })
    .catch(() => {});
}

/**
 * Another application's StasisStart is sent to that application only; what this console sees is
 * the channel entering the dialplan application Stasis(app,...): it subscribes the app to it.
 */
function noteStasisApp(channelId, name) {
  if (!name || state.own.has(channelId)) return;
  let application = state.applications.get(name);
  if (!application) {
    application = { name, channel_ids: [], bridge_ids: [], endpoint_ids: [], device_names: [] };
    state.applications.set(name, application);
  }
  if (!application.channel_ids.includes(channelId)) application.channel_ids.push(channelId);
}

function channelGone(id) {
  const entry = state.channels.get(id);
  if (!entry || entry.gone) return;
  entry.gone = true;
  entry.goneAt = Date.now();
  state.goneOrder.push(id);
  while (state.goneOrder.length > MAX_GONE_CHANNELS) {
    const oldest = state.goneOrder.shift();
    state.channels.delete(oldest);
    state.related.delete(oldest);
  }
  for (const [key, listen] of state.listens) if (key === `channel:${id}`) listen.stop();
  for (const application of state.applications.values()) application.channel_ids = application.channel_ids.filter((c) => c !== id);
}

function noteBridgeUpdate(id) {
  state.bridgeUpdatedAt.delete(id);
  state.bridgeUpdatedAt.set(id, state.eventCount);
  // Only the latest matter (they are compared with a REST answer in flight): keep a bounded few.
  if (state.bridgeUpdatedAt.size > MAX_EVENTS) state.bridgeUpdatedAt.delete(state.bridgeUpdatedAt.keys().next().value);
}

function onEvent(event) {
  state.eventCount++;
  const channelIds = [];
  const bridgeIds = [];
  for (const key of ['channel', 'peer', 'caller', 'forwarded', 'replace_channel', 'transferee', 'transfer_target', 'transferer_first_leg', 'transferer_second_leg']) {
    const channel = event[key];
    if (channel && typeof channel.id === 'string') {
      channelIds.push(channel.id);
      noteChannelOrigin(channel.id, event.asterisk_id);
      if (!state.own.has(channel.id) && event.type !== 'ChannelDestroyed') upsertChannel(channel);
    }
  }
  for (const key of ['bridge', 'destination_bridge']) {
    const bridge = event[key];
    if (bridge && typeof bridge.id === 'string') bridgeIds.push(bridge.id);
  }
  if (event.type === 'Dial' && event.caller && event.peer) relate(event.caller.id, event.peer.id);
  if (event.type === 'ChannelDialplan' && event.dialplan_app === 'Stasis') noteStasisApp(event.channel.id, String(event.dialplan_app_data ?? '').split(',')[0]);
  // A channel that enters Stasis() at the same dialplan position raises no ChannelDialplan (as in
  // Asterisk); Stasis() clearing STASISSTATUS as it starts says the same.
  if (event.type === 'ChannelVarset' && event.variable === 'STASISSTATUS' && event.value === '' && event.channel?.dialplan?.app_name === 'Stasis') noteStasisApp(event.channel.id, String(event.channel.dialplan.app_data ?? '').split(',')[0]);

  switch (event.type) {
    case 'StasisStart': {
      const waiter = state.stasisWaiters.get(event.channel.id);
      if (waiter) waiter();
      const entry = state.channels.get(event.channel.id);
      if (entry) entry.app = event.application;
      const application = state.applications.get(event.application);
      if (application && !application.channel_ids.includes(event.channel.id)) application.channel_ids.push(event.channel.id);
      break;
    }
    case 'StasisEnd': {
      const entry = state.channels.get(event.channel.id);
      if (entry) entry.app = '';
      const application = state.applications.get(event.application);
      if (application) application.channel_ids = application.channel_ids.filter((c) => c !== event.channel.id);
      break;
    }
    case 'ChannelDestroyed':
      channelGone(event.channel.id);
      break;
    case 'ChannelTalkingStarted':
    case 'ChannelTalkingFinished': {
      const entry = state.channels.get(event.channel.id);
      if (entry) entry.talking = event.type === 'ChannelTalkingStarted';
      break;
    }
    case 'BridgeCreated':
    case 'ChannelEnteredBridge':
    case 'ChannelLeftBridge':
    case 'BridgeAttendedTransfer':
    case 'BridgeBlindTransfer':
    case 'BridgeVideoSourceChanged':
      if (event.bridge) {
        state.bridges.set(event.bridge.id, event.bridge);
        noteBridgeUpdate(event.bridge.id);
      }
      break;
    case 'BridgeDestroyed':
      state.bridges.delete(event.bridge.id);
      noteBridgeUpdate(event.bridge.id);
      for (const [key, listen] of state.listens) if (key === `bridge:${event.bridge.id}`) listen.stop();
      break;
    case 'BridgeMerged':
      state.bridges.delete(event.bridge_from.id);
      state.bridges.set(event.bridge.id, event.bridge);
      break;
    case 'EndpointStateChange':
      state.endpoints.set(`${event.endpoint.technology}/${event.endpoint.resource}`, event.endpoint);
      break;
    case 'PeerStatusChange':
    case 'ContactStatusChange':
      if (event.endpoint) {
        const key = `${event.endpoint.technology}/${event.endpoint.resource}`;
        const known = state.endpoints.get(key);
        state.endpoints.set(key, { ...(known ?? event.endpoint), ...event.endpoint, state: event.peer?.peer_status ?? event.endpoint.state });
      }
      break;
    case 'PlaybackStarted':
    case 'PlaybackContinuing':
      state.playbacks.set(event.playback.id, event.playback);
      break;
    case 'PlaybackFinished':
      state.playbacks.delete(event.playback.id);
      break;
    case 'RecordingStarted':
      state.recordings.set(event.recording.name, event.recording);
      // Which call a stored recording came from: known to the page for the recordings it saw start.
      state.recordingCalls.set(event.recording.name, targetName(event.recording.target_uri));
      if (state.recordingCalls.size > MAX_ROWS) state.recordingCalls.delete(state.recordingCalls.keys().next().value);
      break;
    case 'RecordingFinished':
    case 'RecordingFailed':
      state.recordings.delete(event.recording.name);
      // A recording this page started may end on its own (max duration, silence, hang-up).
      for (const [target, name] of state.recordingOf) if (name === event.recording.name) state.recordingOf.delete(target);
      // Only now is there a new stored recording: fetch the list once.
      loadStored().catch(showError);
      break;
    case 'ApplicationReplaced':
      if (event.application === state.app) showError('This console\'s event connection was taken over by another client.');
      break;
    default:
      break;
  }
  for (const playbackTarget of event.playback ? [event.playback.target_uri] : []) {
    const [kind, id] = String(playbackTarget).split(':');
    if (kind === 'channel') channelIds.push(id);
    if (kind === 'bridge') bridgeIds.push(id);
  }
  if (event.recording) {
    const [kind, id] = String(event.recording.target_uri).split(':');
    if (kind === 'channel') channelIds.push(id);
    if (kind === 'bridge') bridgeIds.push(id);
  }
  if (channelIds.some((id) => state.own.has(id)) && channelIds.every((id) => state.own.has(id))) return;
  state.log.push({ seq: ++state.seq, at: event.timestamp || new Date().toISOString(), type: event.type, channels: channelIds, bridges: bridgeIds, event });
  if (state.log.length > MAX_EVENTS) state.log.splice(0, state.log.length - MAX_EVENTS);
  markDirty();
}

// ---- Rendering ----------------------------------------------------------------------------

/** While a button is held down the tables are not rebuilt, so that the click lands on it. */
let pointerHeld = false;

function markDirty() {
  if (state.dirty) return;
  state.dirty = true;
  requestAnimationFrame(renderIfFree);
}

function renderIfFree() {
  if (pointerHeld || !state.dirty) return;
  state.dirty = false;
  render();
}

document.addEventListener('pointerdown', () => {
  pointerHeld = true;
}, true);
// A release outside the window never arrives; leaving the window ends the hold too.
/** @type {[EventTarget, string][]} */
const releases = [[document, 'pointerup'], [document, 'pointercancel'], [window, 'blur']];
for (const [target, type] of releases) {
  target.addEventListener(type, () => {
    pointerHeld = false;
    // After the click event this release leads to.
    setTimeout(renderIfFree, 0);
  }, true);
}

function button(label, onClick, options = {}) {
  const node = el('button', label, { type: 'button' });
  if (options.write) {
    node.classList.add('act');
    node.disabled = !state.canWrite;
  }
  if (options.name) node.dataset.action = options.name;
  node.addEventListener('click', onClick);
  return node;
}

function fillBody(tableId, rows) {
  const body = /** @type {HTMLTableElement} */ ($(tableId)).tBodies[0];
  body.replaceChildren(...rows.slice(0, MAX_ROWS));
}

function meter(key) {
  const node = el('meter', null, { min: '0', max: '1', low: '0.6', high: '0.85', optimum: '0.3', 'data-meter': key });
  const listen = state.listens.get(key);
  /** @type {HTMLMeterElement} */ (node).value = listen ? listen.level : 0;
  node.title = listen ? 'listening' : 'listen in to measure';
  return node;
}

function render() {
  renderChannels();
  renderBridges();
  renderSmallTables();
  renderTimeline();
  if (currentView() === 'live') applySearch();
}

/** The SIP view with the ladder of a SIP channel's dialog. */
async function openChannelLadder(id) {
  const dialog = await dialogOfChannel(id);
  showView('sip');
  if (dialog) await showLadder([dialog.id ?? dialog.call_id]);
}

function renderChannels() {
  const rows = [];
  let live = 0;
  for (const [id, entry] of state.channels) {
    // Ended channels leave the table; the one whose timeline is open stays, greyed out.
    if (state.own.has(id) || (entry.gone && id !== state.selected)) continue;
    const c = entry.channel;
    if (!entry.gone) live++;
    const caller = [c.caller?.name, c.caller?.number ? `<${c.caller.number}>` : ''].filter(Boolean).join(' ');
    const dialplan = c.dialplan ? `${c.dialplan.context},${c.dialplan.exten},${c.dialplan.priority}${c.dialplan.app_name ? ` ${c.dialplan.app_name}(${c.dialplan.app_data ?? ''})` : ''}` : '';
    const actions = el('span');
    if (!entry.gone) {
      actions.append(
        button('Hang up', act(() => ari('DELETE', `channels/${encodeURIComponent(id)}`)), { write: true, name: 'hangup' }),
        button('Play', act(() => ari('POST', `channels/${encodeURIComponent(id)}/play`, { media: /** @type {HTMLInputElement} */ ($('play-media')).value })), { write: true, name: 'play' }),
        state.recordingOf.has(id)
          ? button('Stop rec', act(() => stopRecording(id, markDirty)), { write: true, name: 'stop-record' })
          : button('Record', act(() => startRecording('channels', id, markDirty)), { write: true, name: 'record' }),
        state.listens.has(`channel:${id}`)
          ? button('Stop listening', () => state.listens.get(`channel:${id}`)?.stop(), { name: 'unlisten' })
          : button('Listen', act(() => listen('channel', id, markDirty)), { write: true, name: 'listen' }),
      );
    }
    actions.append(button('Timeline', () => selectChannel(id), { name: 'timeline' }));
    if (c.name.startsWith('PJSIP/')) actions.append(button('SIP', act(() => openChannelLadder(id)), { name: 'sip-ladder' }));
    const stateCell = el('span', c.state);
    if (entry.talking) stateCell.append(el('span', ' talking', { class: 'talking' }));
    // Events of other applications' StasisStart go to those applications only; a channel in
    // Stasis shows it in its dialplan position (Stasis(app,args)).
    const app = entry.app || (c.dialplan?.app_name === 'Stasis' ? String(c.dialplan.app_data ?? '').split(',')[0] : '');
    const tr = row([c.name, stateCell, caller, app, dialplan, el('span', duration(c.creationtime), { 'data-since': c.creationtime, class: 'duration' }), entry.codec, meter(`channel:${id}`), actions, memberOf(id)], {
      'data-channel-id': id,
      'data-state': entry.gone ? 'Destroyed' : c.state,
    });
    if (entry.gone) tr.classList.add('gone');
    if (id === state.selected) tr.classList.add('selected');
    rows.push(tr);
  }
  $('channel-count').textContent = `(${live} live)`;
  $('channels').classList.toggle('clustered', clustered());
  fillBody('channels', rows);
}

function renderBridges() {
  const rows = [];
  for (const [id, bridge] of state.bridges) {
    if (state.own.has(id)) continue;
    const members = el('ul', null, { class: 'members' });
    for (const channelId of bridge.channels ?? []) {
      const entry = state.channels.get(channelId);
      if (state.own.has(channelId)) continue;
      const role = entry?.channel?.bridge_role ?? '';
      members.append(el('li', `${entry ? entry.channel.name : channelId}${role ? ` (${role})` : ''}`, { 'data-member': channelId }));
    }
    const actions = el('span');
    actions.append(
      button('Play', act(() => ari('POST', `bridges/${encodeURIComponent(id)}/play`, { media: /** @type {HTMLInputElement} */ ($('play-media')).value })), { write: true, name: 'play' }),
      state.recordingOf.has(id)
        ? button('Stop rec', act(() => stopRecording(id, markDirty)), { write: true, name: 'stop-record' })
        : button('Record', act(() => startRecording('bridges', id, markDirty)), { write: true, name: 'record' }),
      state.listens.has(`bridge:${id}`)
        ? button('Stop listening', () => state.listens.get(`bridge:${id}`)?.stop(), { name: 'unlisten' })
        : button('Listen', act(() => listen('bridge', id, markDirty)), { write: true, name: 'listen' }),
    );
    // Its name first (an unnamed bridge: its id's start); the whole id last, for ARI calls.
    rows.push(row([bridge.name || id.slice(0, 8), bridge.bridge_type, bridge.technology, members, meter(`bridge:${id}`), actions, el('span', id, { class: 'mono note' })], { 'data-bridge-id': id, 'data-members': String(members.childElementCount) }));
  }
  $('bridge-count').textContent = `(${rows.length})`;
  fillBody('bridges', rows);
}

function renderSmallTables() {
  fillBody(
    'playbacks',
    [...state.playbacks.values()].map((p) =>
      row([p.id, p.media_uri, targetName(p.target_uri), p.state, button('Stop', act(() => ari('DELETE', `playbacks/${encodeURIComponent(p.id)}`)), { write: true, name: 'stop-playback' })]),
    ),
  );
  fillBody(
    'recordings',
    [...state.recordings.values()].map((r) =>
      row([r.name, targetName(r.target_uri), r.state, button('Stop', act(() => ari('POST', `recordings/live/${encodeURIComponent(r.name)}/stop`)), { write: true, name: 'stop-recording' })], { 'data-recording': r.name }),
    ),
  );
  fillBody(
    'stored',
    state.stored.map((r) => row([...storedCells(r), button('Play here', act(() => playStored(r.name)), { name: 'play-stored' })], { 'data-stored': r.name })),
  );
  fillBody(
    'endpoints',
    [...state.endpoints.values()].map((e) =>
      row([`${e.technology}/${e.resource}`, e.state ?? '', String(e.channel_ids?.length ?? 0)], { 'data-endpoint': `${e.technology}/${e.resource}`, 'data-state': e.state ?? '' }),
    ),
  );
  fillBody(
    'applications',
    [...state.applications.values()].map((a) =>
      row([a.name, (a.channel_ids ?? []).filter((id) => !state.own.has(id)).map((id) => labelled(channelName(id), id)).join(', '), (a.bridge_ids ?? []).map((id) => labelled(bridgeName(id), id)).join(', '), (a.endpoint_ids ?? []).join(', '), (a.device_names ?? []).join(', ')]),
    ),
  );
}

// Durations move on their own: one timer redraws the text, no request is made.
setInterval(() => {
  renderServerInfo();
  for (const node of document.querySelectorAll('#channels .duration')) {
    const since = node.getAttribute('data-since');
    if (since) node.textContent = duration(since);
  }
}, 1000);

// ---- Timeline -----------------------------------------------------------------------------

function selectChannel(id) {
  if (currentView() !== 'live') showView('live');
  state.selected = id;
  $('timeline-panel').hidden = false;
  markDirty();
}

// ---- Start --------------------------------------------------------------------------------

function start() {
  $('login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const user = /** @type {HTMLInputElement} */ ($('login-user')).value;
    const password = /** @type {HTMLInputElement} */ ($('login-password')).value;
    $('login-error').textContent = '';
    signIn(user, password).catch((err) => {
      $('login-error').textContent = err instanceof AriRequestError && err.status === 401 ? 'Wrong user or password' : String(err.message ?? err);
    });
  });
  $('logout').addEventListener('click', signOut);
  $('originate-form').addEventListener('submit', (event) => act(() => originate(event))());
  $('timeline-filter').addEventListener('input', markDirty);
  $('timeline-export').addEventListener('click', exportTimeline);
  startViews(showError);
  onOpenTimeline(selectChannel);
  $('timeline-close').addEventListener('click', () => {
    $('timeline-panel').hidden = true;
    state.selected = '';
    markDirty();
  });
  window.addEventListener('pagehide', () => {
    for (const l of state.listens.values()) l.stop();
  });
  const saved = sessionStorage.getItem(STORAGE_KEY);
  if (saved) {
    try {
      const { user, password } = JSON.parse(saved);
      signIn(String(user), String(password)).catch(() => sessionStorage.removeItem(STORAGE_KEY));
    } catch {
      sessionStorage.removeItem(STORAGE_KEY);
    }
  }
}

start();
