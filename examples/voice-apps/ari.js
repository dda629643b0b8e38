// A few lines of ARI for the example voice apps: REST requests with fetch and the events
// WebSocket with `ws`, nothing else, so the apps show plain ARI.
import WebSocket from 'ws';

export async function connectAri({ url, username, password, apps }, onEvent) {
  const base = url.replace(/\/+$/, '').replace(/\/ari$/, '');
  const authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  const request = async (method, path, query = {}) => {
    const search = new URLSearchParams(query).toString();
    const response = await fetch(`${base}/ari${path}${search ? `?${search}` : ''}`, { method, headers: { authorization } });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ari/events?app=${apps.map(encodeURIComponent).join(',')}`, { headers: { authorization } });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.on('message', (data) => {
    try {
      onEvent(JSON.parse(String(data)));
    } catch (err) {
      console.error('event handling failed:', err.message);
    }
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
