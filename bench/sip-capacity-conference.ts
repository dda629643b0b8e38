// The ARI application of bench/sip-capacity.ts's conference scenario: every call answered into
// Stasis(conf) waits for two more, and each three go into a new mixing bridge of their own (N
// bridges of three SIPp legs: the shape a worker mix serves, issue 25). It runs in the bench's
// process, over a real event WebSocket, so its cost is not the server's. Calls left over when the
// step ends (fewer than three) stay unbridged: their audio is not counted as mixed.
import WebSocket from 'ws';

const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
export const CONFERENCE_APP = 'conf';
/** Members per bridge. */
export const CONFERENCE_SIZE = 3;

export interface ConferenceApp {
  /** Bridges made so far. */
  readonly bridges: number;
  /** Requests that failed (a bridge not made, a channel not added). */
  readonly failures: number;
  stop(): Promise<void>;
}

async function post(url: string): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { authorization: AUTH } });
}

export async function startConferenceApp(base: string): Promise<ConferenceApp> {
  const socket = new WebSocket(`${base.replace('http', 'ws')}/ari/events?app=${CONFERENCE_APP}`, { headers: { authorization: AUTH } });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let waiting: string[] = [];
  const made: string[] = [];
  let failures = 0;
  const pending = new Set<Promise<void>>();
  const bridge = async (members: readonly string[]): Promise<void> => {
    const created = await post(`${base}/ari/bridges?type=mixing`);
    if (!created.ok) {
      failures += 1;
      return;
    }
    const { id } = (await created.json()) as { id: string };
    made.push(id);
    const added = await post(`${base}/ari/bridges/${id}/addChannel?channel=${members.join(',')}`);
    if (!added.ok) failures += 1;
  };
  socket.on('message', (data) => {
    const event = JSON.parse(String(data)) as { type?: string; channel?: { id?: string } };
    if (event.type !== 'StasisStart' || !event.channel?.id) return;
    waiting.push(event.channel.id);
    if (waiting.length < CONFERENCE_SIZE) return;
    const members = waiting;
    waiting = [];
    const work = bridge(members).catch(() => void (failures += 1));
    pending.add(work);
    void work.finally(() => pending.delete(work));
  });
  return {
    get bridges() {
      return made.length;
    },
    get failures() {
      return failures;
    },
    async stop() {
      await Promise.allSettled([...pending]);
      socket.close();
      // The bridges outlive their calls in ARI: removed so that the next step starts from none.
      await Promise.allSettled(made.map((id) => fetch(`${base}/ari/bridges/${id}`, { method: 'DELETE', headers: { authorization: AUTH } })));
    },
  };
}
