// The floor's events for one originate cycle, learnt from the server (issue 25's fairness fix).
//
// The server sends 13 event frames per cycle to the app: Asterisk subscribes an originating app to
// both halves of a Local channel, so the `;2` half's dialplan, state, hang-up and destruction go
// out too, plus two Dial events. A floor that sends only the `;1` half's six measures a smaller
// job. captureCycle() records one cycle's frames as the server wrote them (alone on the server, so
// every frame belongs to it) and the POST answer; the floor then builds the same JSON per cycle
// (instantiate: fresh objects, fresh ids, names and timestamps, serialised each time — no cached
// buffer), so its frames have the server's count, sizes and shapes.
import { ariRequest, type AriAnswer } from './ari-request.ts';
import WebSocket from 'ws';
import { once } from 'node:events';

const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;

/** One cycle as the server answered it: the POST body and each frame, with the step it followed. */
export interface CycleTemplate {
  readonly created: unknown;
  /** Frames after the POST (`originate`) and after the DELETE (`hangup`), in the server's order. */
  readonly frames: readonly { readonly after: 'originate' | 'hangup'; readonly event: Record<string, unknown> }[];
}

const request = (base: URL, method: string, path: string): Promise<AriAnswer> => ariRequest({ base, authorization: AUTH, timeoutMs: 10_000 }, method, path);

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one cycle alone on the server and records what it answered and sent (app `bench`). */
export async function captureCycle(url: string): Promise<CycleTemplate> {
  const base = new URL(url);
  const socket = new WebSocket(`${url.replace('http', 'ws')}/ari/events?app=bench`, { headers: { authorization: AUTH } });
  const frames: { after: 'originate' | 'hangup'; event: Record<string, unknown> }[] = [];
  let step: 'originate' | 'hangup' = 'originate';
  socket.on('message', (data) => {
    const event = JSON.parse(String(data)) as Record<string, unknown>;
    // The delivery fields the floor adds itself when it sends, as the server does per application.
    delete event.application;
    delete event.asterisk_id;
    delete event.sequence;
    frames.push({ after: step, event });
  });
  await once(socket, 'open');
  try {
    const created = await request(base, 'POST', '/ari/channels?endpoint=Local/answer@default&app=bench');
    if (created.status !== 200) throw new Error(`capture: originate answered ${created.status}`);
    const id = (JSON.parse(created.body) as { id: string }).id;
    // Generous waits: the frames of each step have all arrived well within them, even at load 15.
    await delay(500);
    step = 'hangup';
    const deleted = await request(base, 'DELETE', `/ari/channels/${encodeURIComponent(id)}`);
    if (deleted.status !== 204) throw new Error(`capture: hangup answered ${deleted.status}`);
    await delay(500);
    const types = frames.map((frame) => frame.event.type);
    if (!types.includes('StasisStart') || !types.includes('ChannelDestroyed')) throw new Error(`capture: the cycle sent ${types.join(',')}`);
    return { created: JSON.parse(created.body), frames };
  } finally {
    socket.terminate();
  }
}

/** What changes from one cycle to the next: the halves' ids and names and the creation time. */
export interface CycleNames {
  readonly ids: readonly [string, string];
  readonly names: readonly [string, string];
  readonly creationtime: string;
}

/** The ids and names of the captured cycle's two halves (`;1` is the originated channel). */
export function templateNames(template: CycleTemplate): CycleNames {
  const first = template.created as { id: string; name: string; creationtime: string };
  let second: { id: string; name: string } | undefined;
  for (const { event } of template.frames) {
    const channel = event.channel as { id: string; name: string } | undefined;
    if (channel && channel.id !== first.id) second = channel;
  }
  return { ids: [first.id, second?.id ?? ''], names: [first.name, second?.name ?? ''], creationtime: first.creationtime };
}

/**
 * A fresh copy of a captured value for this cycle: the captured halves' ids and names replaced by
 * this cycle's, creation times by this cycle's, timestamps by now.
 */
export function instantiate(value: unknown, from: CycleNames, to: CycleNames, now: string, key = ''): unknown {
  if (typeof value === 'string') {
    if (key === 'timestamp') return now;
    if (key === 'creationtime') return to.creationtime;
    if (value === from.ids[0]) return to.ids[0];
    if (value === from.ids[1]) return to.ids[1];
    if (value === from.names[0]) return to.names[0];
    if (value === from.names[1]) return to.names[1];
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => instantiate(item, from, to, now));
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [field, item] of Object.entries(value)) copy[field] = instantiate(item, from, to, now, field);
  return copy;
}
