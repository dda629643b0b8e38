// @ts-check
// What the console shows of the server beyond ARI's objects: its version and uptime in the
// header, and the stored recordings with their date, length and size, newest first. Both come
// from the server's admin routes (`admin/core/status`, `admin/recordings`); ARI's own answers
// (`asterisk/info`, `recordings/stored`) are the fallback when those are refused.
import { admin, ari } from './ari.js';
import { $ } from './dom.js';
import { MAX_ROWS, state } from './state.js';

/** "3 h 2 min", "5 min 3 s", "12 s". */
export function describeUptime(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min ${s % 60} s`;
  return `${s} s`;
}

/** "1.2 MB", "640 kB", "512 B". */
export function describeSize(bytes) {
  if (typeof bytes !== 'number') return '';
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${Math.round(bytes / 1e3)} kB`;
  return `${bytes} B`;
}

/** Shows "Patchbay <version>, up <uptime>" in the header; the uptime then counts on in the page. */
export async function loadServerInfo() {
  let version = '';
  let startedAt = NaN;
  try {
    const status = await admin('core/status');
    version = String(status.version ?? '');
    startedAt = Date.now() - Number(status.uptime_seconds) * 1000;
  } catch {
    const info = await ari('GET', 'asterisk/info');
    version = String(info.system?.version ?? '');
    startedAt = Date.parse(String(info.status?.startup_time ?? '').replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
  }
  state.server = { version, startedAt };
  renderServerInfo();
}

export function renderServerInfo() {
  const server = state.server;
  if (!server) return;
  const up = Number.isFinite(server.startedAt) ? `, up ${describeUptime((Date.now() - server.startedAt) / 1000)}` : '';
  $('server-info').textContent = `Patchbay ${server.version}${up}`;
}

/** Stored recordings, newest first, with what the admin route knows of them (else names only). */
export async function loadStoredRecordings() {
  try {
    state.stored = (await admin('recordings')).slice(0, MAX_ROWS);
  } catch {
    state.stored = (await ari('GET', 'recordings/stored')).slice(0, MAX_ROWS);
  }
}

/**
 * The cells of a stored recording's row: name, format, date, length, size, the call it recorded.
 * @param {{ name: string, format: string, modified?: string, duration_seconds?: number | null, size_bytes?: number, call?: { target_name: string } | null }} recording
 */
export function storedCells(recording) {
  const when = recording.modified ? new Date(Date.parse(String(recording.modified).replace(/([+-]\d\d)(\d\d)$/, '$1:$2'))).toLocaleString() : '';
  const length = typeof recording.duration_seconds === 'number' ? `${recording.duration_seconds.toFixed(1)} s` : '';
  // The server's record of the call (admin/recordings) survives reloads and restarts; the page's own is the fallback.
  return [recording.name, recording.format, when, length, describeSize(recording.size_bytes), recording.call?.target_name || state.recordingCalls.get(recording.name) || ''];
}
