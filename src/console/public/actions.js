// @ts-check
// What the console's buttons do beyond a single ARI call: originate from the form, start and
// stop a recording (the page remembers which one it started per target), play a stored
// recording in the page with the user's credentials.
import { ari, ariUrl, AriRequestError, authHeader } from './ari.js';
import { $ } from './dom.js';
import { randomId, state } from './state.js';

export async function originate(event) {
  event.preventDefault();
  const value = (id) => /** @type {HTMLInputElement} */ ($(id)).value.trim();
  const extension = value('originate-extension');
  const app = value('originate-app');
  if (!extension && !app) throw new Error('Give an extension (dialplan) or an application');
  await ari('POST', 'channels', {
    endpoint: value('originate-endpoint'),
    extension: extension || undefined,
    context: extension ? value('originate-context') || 'default' : undefined,
    app: extension ? undefined : app,
    callerId: value('originate-callerid') || undefined,
  });
}

export async function startRecording(resource, id, changed) {
  const name = `console-${new Date().toISOString().replace(/[^0-9]/g, '').slice(0, 14)}-${randomId().slice(0, 6)}`;
  await ari('POST', `${resource}/${encodeURIComponent(id)}/record`, { name, format: 'wav', ifExists: 'fail' });
  state.recordingOf.set(id, name);
  changed();
}

export async function stopRecording(id, changed) {
  const name = state.recordingOf.get(id);
  state.recordingOf.delete(id);
  changed();
  if (name) await ari('POST', `recordings/live/${encodeURIComponent(name)}/stop`);
}

/** Fetches a stored recording with the credentials and plays it in the page's audio element. */
export async function playStored(name) {
  const response = await fetch(ariUrl(`recordings/stored/${encodeURIComponent(name)}/file`), { credentials: 'omit', headers: { Authorization: authHeader() } });
  if (!response.ok) throw new AriRequestError(response.status, response.statusText);
  const player = /** @type {HTMLAudioElement} */ ($('recording-player'));
  if (player.src) URL.revokeObjectURL(player.src);
  player.src = URL.createObjectURL(await response.blob());
  player.hidden = false;
  player.dataset.recording = name;
  await player.play().catch(() => {});
}
