// An ARI client that runs originate cycles against a server (or the bench floor):
//   POST /ari/channels?endpoint=Local/answer@default&app=bench → StasisStart of that channel
//   → DELETE /ari/channels/{id} → ChannelDestroyed of that channel,
// with its own keep-alive agent and event WebSocket (app `bench`). Each wait is bounded.
import { once } from 'node:events';
import http from 'node:http';
import WebSocket from 'ws';
import { ariRequest, type AriAnswer } from './ari-request.ts';

/** The bench's ARI user: Patchbay's bench targets have it; another server (bench/external-target.ts) may name its own. */
const BENCH_USER = 'asterisk:asterisk';
const STEP_TIMEOUT_MS = 10_000;

export interface CycleClient {
  /** Runs `total` cycles, `parallel` at once, started no faster than `perSecond` when given. */
  run(total: number, parallel: number, perSecond?: number): Promise<{ durations: number[]; seconds: number }>;
  /** Event types seen for one channel per cycle, in order (the first cycle's). */
  readonly firstCycleTypes: string[];
  close(): void;
}

export async function cycleClient(url: string, inflight: number, user = BENCH_USER): Promise<CycleClient> {
  const AUTH = `Basic ${Buffer.from(user).toString('base64')}`;
  const base = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: inflight + 4 });
  const request = (method: string, path: string): Promise<AriAnswer> => ariRequest({ base, authorization: AUTH, timeoutMs: STEP_TIMEOUT_MS, agent }, method, path);
  type Wanted = 'StasisStart' | 'ChannelDestroyed';
  const seen = new Map<string, Set<string>>();
  const waiters = new Map<string, { type: Wanted; resolve: () => void }>();
  const firstCycleTypes: string[] = [];
  let firstId: string | undefined;
  const socket = new WebSocket(`${url.replace('http', 'ws')}/ari/events?app=bench`, { headers: { authorization: AUTH } });
  socket.on('message', (data) => {
    const event = JSON.parse(String(data)) as { type: string; channel?: { id: string } };
    const id = event.channel?.id;
    if (!id) return;
    if (firstId === undefined) firstId = id;
    if (id === firstId) firstCycleTypes.push(event.type);
    const waiter = waiters.get(id);
    if (waiter && waiter.type === event.type) {
      waiters.delete(id);
      return waiter.resolve();
    }
    let types = seen.get(id);
    if (!types) seen.set(id, (types = new Set()));
    types.add(event.type);
  });
  await once(socket, 'open');
  const waitFor = (id: string, type: Wanted): Promise<void> => {
    if (seen.get(id)?.delete(type)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} for ${id}`)), STEP_TIMEOUT_MS);
      waiters.set(id, { type, resolve: () => (clearTimeout(timer), resolve()) });
    });
  };
  const cycle = async (): Promise<number> => {
    const started = performance.now();
    const created = await request('POST', '/ari/channels?endpoint=Local/answer@default&app=bench');
    if (created.status !== 200) throw new Error(`originate answered ${created.status}: ${created.body}`);
    const id = (JSON.parse(created.body) as { id: string }).id;
    await waitFor(id, 'StasisStart');
    const deleted = await request('DELETE', `/ari/channels/${encodeURIComponent(id)}`);
    if (deleted.status !== 204) throw new Error(`hangup answered ${deleted.status}`);
    await waitFor(id, 'ChannelDestroyed');
    seen.delete(id);
    return performance.now() - started;
  };
  return {
    firstCycleTypes,
    async run(total, parallel, perSecond) {
      const durations: number[] = [];
      let started = 0;
      const began = performance.now();
      const worker = async (): Promise<void> => {
        while (started < total) {
          const index = started++;
          if (perSecond) {
            const due = began + (index * 1000) / perSecond;
            const wait = due - performance.now();
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          }
          durations.push(await cycle());
        }
      };
      await Promise.all(Array.from({ length: Math.min(parallel, total) }, worker));
      return { durations, seconds: (performance.now() - began) / 1000 };
    },
    close() {
      socket.terminate();
      agent.destroy();
    },
  };
}

