// A few lines of ARI for the example voice apps: the events WebSocket with `ws`, and REST requests
// sent over that same socket (ARI's REST over WebSocket, Asterisk 22.4 and later, Patchbay), nothing
// else, so the apps show plain ARI.
//
// Why not fetch: an IVR answers many calls at once, and fetch opens a new HTTP connection for
// each request made while the others are busy. A Node.js server under load takes in one new
// connection per turn of its event loop, so the last of such a burst waited seconds in the listen
// queue — the first callers of a busy minute heard silence where the greeting should be. The
// events socket is open and authenticated already: a request on it costs no connection.
import WebSocket from 'ws';

const REQUEST_TIMEOUT_MS = 10_000;

export async function connectAri({ url, username, password, apps }, onEvent) {
  const base = url.replace(/\/+$/, '').replace(/\/ari$/, '');
  const authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ari/events?app=${apps.map(encodeURIComponent).join(',')}`, { headers: { authorization } });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.on('error', () => undefined);

  const waiting = new Map();
  let nextId = 0;
  const request = (method, path, query = {}) =>
    new Promise((resolve, reject) => {
      const id = String(++nextId);
      const fail = (message) => {
        waiting.delete(id);
        reject(new Error(`${method} ${path}: ${message}`));
      };
      const timer = setTimeout(() => fail('no answer'), REQUEST_TIMEOUT_MS);
      waiting.set(id, (response) => {
        clearTimeout(timer);
        waiting.delete(id);
        const text = response.message_body ?? '';
        if (response.status_code >= 300) return reject(new Error(`${method} ${path}: ${response.status_code} ${text}`));
        resolve(text ? JSON.parse(text) : null);
      });
      const query_strings = Object.entries(query).map(([name, value]) => ({ name, value: String(value) }));
      ws.send(JSON.stringify({ type: 'RESTRequest', request_id: id, method, uri: path.replace(/^\//, ''), query_strings }), (err) => {
        if (err) {
          clearTimeout(timer);
          fail(err.message);
        }
      });
    });

  ws.on('message', (data) => {
    try {
      const message = JSON.parse(String(data));
      if (message.type === 'RESTResponse') waiting.get(message.request_id)?.(message);
      else onEvent(message);
    } catch (err) {
      console.error('event handling failed:', err.message);
    }
  });
  ws.on('close', () => {
    for (const answer of waiting.values()) answer({ status_code: 599, message_body: 'the events WebSocket closed' });
  });
  return { request, close: () => ws.close() };
}

/** Options from the environment when an app is run by hand. */
export function ariFromEnv() {
  return {
    url: process.env.ARI_URL ?? 'http://127.0.0.1:8088',
    username: process.env.ARI_USER ?? 'asterisk',
    password: process.env.ARI_PASSWORD ?? 'asterisk',
  };
}
