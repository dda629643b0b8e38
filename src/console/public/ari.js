// @ts-check
// ARI over HTTP for the web console: URLs under this server's ARI (relative to the page, so an
// `http.prefix` is kept) and calls with the signed-in user's credentials as HTTP Basic.
import { state } from './state.js';

/** Base64 of a string's UTF-8 bytes (btoa alone refuses characters above U+00FF). */
function base64Utf8(text) {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function authHeader() {
  return `Basic ${base64Utf8(`${state.user}:${state.password}`)}`;
}

/** A URL under this server's ARI, relative to the page so that an `http.prefix` is kept. */
export function ariUrl(path, params) {
  const url = new URL(`ari/${path}`, location.href);
  for (const [key, value] of Object.entries(params ?? {})) if (value !== undefined && value !== '') url.searchParams.set(key, String(value));
  return url;
}

/** A URL of this server's admin routes (`admin/...`, what ARI has no operation for), relative to the page. */
export function adminUrl(path) {
  return new URL(`admin/${path}`, location.href);
}

export class AriRequestError extends Error {
  constructor(status, message) {
    super(`${status}: ${message}`);
    this.status = status;
  }
}

/** Calls ARI; resolves to the parsed JSON body (or null), rejects with AriRequestError. */
export function ari(method, path, params, body) {
  return request(method, ariUrl(path, params), body);
}

/** Reads one of the server's admin routes (src/ops/admin.ts) with the same credentials. */
export function admin(path) {
  return request('GET', adminUrl(path));
}

async function request(method, url, body) {
  // credentials 'omit': the Authorization header is ours; with the browser's own credentials a
  // 401 (which carries WWW-Authenticate, as in Asterisk) would open the browser's login dialog.
  // keepalive: the clean-up DELETEs of a listen-in are still sent while the page unloads.
  /** @type {RequestInit & { headers: Record<string, string> }} */
  const init = { method, credentials: 'omit', keepalive: method === 'DELETE', headers: { Authorization: authHeader() } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!response.ok) throw new AriRequestError(response.status, (json && json.message) || response.statusText);
  return json;
}
