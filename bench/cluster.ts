// Cluster benchmark (docs/cluster.md): a real nats-server -js and 1, 2, 3 Patchbay members, each in
// a child process (developer mode off, log level warn), on this machine. Prints
//   - originate cycles/s through member 1 with the channels spread over 1, 2 and 3 members
//     (`cluster_node` round robin): POST originate → StasisStart (relayed through the stream to
//     the application on member 1) → DELETE (forwarded to the owner) → ChannelDestroyed;
//   - the latency of GET /channels/{id} asked of the owner (local) and of another member
//     (forwarded over NATS), p50/p99;
//   - the latency of a live recording's GET /recordings/live/{name} asked of its holder and of
//     another member (a live recording has no subject of its own: the members are asked for it),
//     p50/p99, with three members;
//   - failover: SIGKILL of a member holding a channel → ChannelDestroyed (cause 38) at the
//     application, with the default cluster.failure_seconds (5).
// Bounded in count and in time. Usage: npm run bench:cluster [-- --cycles 300 --inflight 20 --requests 500]
// (`--latency-only`: the two request latencies alone, without the cycles and the failover)
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { ariRequest, type AriAnswer } from './ari-request.ts';
import { runTarget } from './target.ts';
import { natsServerInstalled, startNatsServer, type NatsServer } from '../test/helpers/nats-server.ts';

const { values } = parseArgs({
  options: {
    member: { type: 'string' },
    cycles: { type: 'string', default: '300' },
    inflight: { type: 'string', default: '20' },
    requests: { type: 'string', default: '500' },
    'latency-only': { type: 'boolean', default: false },
  },
});
const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
const STEP_TIMEOUT_MS = 15_000;


interface Member {
  readonly node: string;
  readonly url: string;
  readonly child: ChildProcess;
}

async function startMember(nats: NatsServer | undefined, index: number): Promise<Member> {
  const node = `bench${index}`;
  const settings = { server_id: `02:00:00:00:be:0${index}`, sip: { port: 0 }, ...(nats ? { cluster: { nats_url: nats.url, node_id: node } } : {}) };
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--member', JSON.stringify(settings)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`member ${node} did not start`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /(http:\/\/\S+)\n/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`member ${node} exited (${code})`)));
  });
  return { node, url, child };
}

function stopMember(member: Member): Promise<void> {
  return new Promise((resolve) => {
    if (member.child.exitCode !== null || member.child.signalCode !== null) return resolve();
    const timer = setTimeout(() => {
      member.child.kill('SIGKILL');
      resolve();
    }, 10_000);
    member.child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    member.child.stdin!.end();
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function request(url: string, method: string, path: string): Promise<AriAnswer> {
  return ariRequest({ base: new URL(url), authorization: AUTH, timeoutMs: STEP_TIMEOUT_MS, agent }, method, path);
}

/** An application's event WebSocket that resolves waits for (channel id, event type). */
class AppSocket {
  private readonly waiters = new Map<string, (event: Record<string, unknown>) => void>();
  private readonly early = new Map<string, Record<string, unknown>>();
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const event = JSON.parse(String(data)) as Record<string, unknown>;
      const id = (event.channel as { id?: string } | undefined)?.id;
      if (!id) return;
      const key = `${id} ${String(event.type)}`;
      const waiter = this.waiters.get(key);
      if (waiter) {
        this.waiters.delete(key);
        waiter(event);
      } else if (event.type === 'StasisStart' || event.type === 'ChannelDestroyed') this.early.set(key, event);
    });
  }

  static async open(url: string, app: string): Promise<AppSocket> {
    const socket = new WebSocket(`${url.replace('http', 'ws')}/ari/events?app=${app}`, { headers: { authorization: AUTH } });
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return new AppSocket(socket);
  }

  wait(id: string, type: string, timeoutMs = STEP_TIMEOUT_MS): Promise<Record<string, unknown>> {
    const key = `${id} ${type}`;
    const early = this.early.get(key);
    if (early) {
      this.early.delete(key);
      return Promise.resolve(early);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} for ${id}`)), timeoutMs);
      this.waiters.set(key, (event) => {
        clearTimeout(timer);
        resolve(event);
      });
    });
  }

  close(): void {
    this.socket.terminate();
  }
}

/** Waits until member 1 sees `count` members and every other member knows the application. */
async function settle(members: Member[], app: string): Promise<void> {
  if ((await request(members[0]!.url, 'GET', '/admin/cluster')).status === 404) return; // a single server
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = JSON.parse((await request(members[0]!.url, 'GET', '/admin/cluster')).body) as { members: unknown[] };
    let known = status.members.length === members.length;
    for (const member of members.slice(1)) known &&= (await request(member.url, 'GET', `/ari/applications/${app}`)).status === 200;
    if (known) return;
    if (Date.now() > deadline) throw new Error('the cluster did not settle');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function originateCycles(members: Member[], cycles: number, inflight: number): Promise<{ perSecond: number; p50: number; p99: number }> {
  const entry = members[0]!;
  const app = `bench-cycles-${members.length}`;
  const events = await AppSocket.open(entry.url, app);
  await settle(members, app);
  let started = 0;
  const durations: number[] = [];
  const cycle = async (index: number): Promise<void> => {
    const began = performance.now();
    const node = members[index % members.length]!.node;
    const created = await request(entry.url, 'POST', `/ari/channels?endpoint=Local/answer@default&app=${app}&cluster_node=${node}`);
    if (created.status !== 200) throw new Error(`originate answered ${created.status}: ${created.body}`);
    const id = (JSON.parse(created.body) as { id: string }).id;
    await events.wait(id, 'StasisStart');
    const deleted = await request(entry.url, 'DELETE', `/ari/channels/${id}`);
    if (deleted.status !== 204) throw new Error(`hangup answered ${deleted.status}: ${deleted.body}`);
    await events.wait(id, 'ChannelDestroyed');
    durations.push(performance.now() - began);
  };
  // Warm-up (discarded).
  for (let i = 0; i < 20; i++) await cycle(i);
  durations.length = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(inflight, cycles) }, async () => {
      while (started < cycles) await cycle(started++);
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  events.close();
  durations.sort((a, b) => a - b);
  return { perSecond: cycles / seconds, p50: percentile(durations, 50), p99: percentile(durations, 99) };
}

async function requestLatency(members: Member[], count: number): Promise<{ local: number[]; forwarded: number[] }> {
  const [owner, other] = members as [Member, Member];
  const app = 'bench-latency';
  const events = await AppSocket.open(owner.url, app);
  await settle(members, app);
  const created = await request(owner.url, 'POST', `/ari/channels?endpoint=Local/answer@default&app=${app}&cluster_node=${owner.node}`);
  const id = (JSON.parse(created.body) as { id: string }).id;
  await events.wait(id, 'StasisStart');
  const time = async (url: string): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < 50; i++) await request(url, 'GET', `/ari/channels/${id}`); // warm-up
    for (let i = 0; i < count; i++) {
      const began = performance.now();
      const answer = await request(url, 'GET', `/ari/channels/${id}`);
      if (answer.status !== 200) throw new Error(`GET answered ${answer.status}`);
      out.push(performance.now() - began);
    }
    return out.sort((a, b) => a - b);
  };
  const local = await time(owner.url);
  const forwarded = await time(other.url);
  await request(owner.url, 'DELETE', `/ari/channels/${id}`);
  events.close();
  return { local, forwarded };
}

/** GET of a live recording on member 1, asked of member 1 (its holder) and of member 2. */
async function liveRecordingLatency(members: Member[], count: number): Promise<{ local: number[]; forwarded: number[] }> {
  const [holder, other] = members as [Member, Member];
  const app = 'bench-live';
  const events = await AppSocket.open(holder.url, app);
  await settle(members, app);
  const created = await request(holder.url, 'POST', `/ari/channels?endpoint=Local/answer@default&app=${app}&cluster_node=${holder.node}`);
  const id = (JSON.parse(created.body) as { id: string }).id;
  await events.wait(id, 'StasisStart');
  const recording = await request(holder.url, 'POST', `/ari/channels/${id}/record?name=bench-live&format=wav&ifExists=overwrite`);
  if (recording.status !== 201) throw new Error(`record answered ${recording.status}: ${recording.body}`);
  const time = async (url: string): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < 50; i++) await request(url, 'GET', '/ari/recordings/live/bench-live'); // warm-up
    for (let i = 0; i < count; i++) {
      const began = performance.now();
      const answer = await request(url, 'GET', '/ari/recordings/live/bench-live');
      if (answer.status !== 200) throw new Error(`GET answered ${answer.status}`);
      out.push(performance.now() - began);
    }
    return out.sort((a, b) => a - b);
  };
  const local = await time(holder.url);
  const forwarded = await time(other.url);
  await request(holder.url, 'DELETE', `/ari/channels/${id}`);
  events.close();
  return { local, forwarded };
}

async function failover(members: Member[]): Promise<number> {
  const [home, victim] = members as [Member, Member];
  const app = 'bench-failover';
  const events = await AppSocket.open(home.url, app);
  await settle(members, app);
  const created = await request(home.url, 'POST', `/ari/channels?endpoint=Local/answer@default&app=${app}&cluster_node=${victim.node}`);
  const id = (JSON.parse(created.body) as { id: string }).id;
  await events.wait(id, 'StasisStart');
  const killed = performance.now();
  victim.child.kill('SIGKILL');
  const destroyed = await events.wait(id, 'ChannelDestroyed', 30_000);
  const ms = performance.now() - killed;
  if (destroyed.cause !== 38) throw new Error(`ChannelDestroyed cause ${String(destroyed.cause)}, not 38`);
  events.close();
  return ms;
}

async function runBench(): Promise<void> {
  if (!natsServerInstalled()) {
    console.log('nats-server is not installed: nothing measured (apt-get install nats-server)');
    return;
  }
  const cycles = clamp(values.cycles!, 10, 5000);
  const inflight = clamp(values.inflight!, 1, 100);
  const requests = clamp(values.requests!, 10, 10_000);
  const nats = await startNatsServer();
  const members: Member[] = [];
  const line = (name: string, sorted: number[]): string => `  ${name}: p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms`;
  try {
    if (values['latency-only']) {
      for (let n = 1; n <= 3; n++) members.push(await startMember(nats, n));
      await printLatencies(members, requests, line);
      return;
    }
    console.log(`originate cycles through member 1, channels spread over the members (${cycles} cycles, ${inflight} in flight):`);
    const single = await startMember(undefined, 0);
    try {
      const result = await originateCycles([single], cycles, inflight);
      console.log(`  no cluster: ${result.perSecond.toFixed(0)} cycles/s, cycle p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms`);
    } finally {
      await stopMember(single);
    }
    for (let n = 1; n <= 3; n++) {
      members.push(await startMember(nats, n));
      const result = await originateCycles(members, cycles, inflight);
      console.log(`  ${n} member${n === 1 ? ' ' : 's'}: ${result.perSecond.toFixed(0)} cycles/s, cycle p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms`);
    }
    await printLatencies(members, requests, line);
    const ms = await failover(members);
    console.log(`failover (cluster.failure_seconds 5): ChannelDestroyed cause 38 ${ms.toFixed(0)} ms after SIGKILL of the owner`);
  } finally {
    await Promise.all(members.map(stopMember));
    agent.destroy();
    await nats.stop();
  }
}

async function printLatencies(members: Member[], requests: number, line: (name: string, sorted: number[]) => string): Promise<void> {
  const latency = await requestLatency(members, requests);
  console.log(`GET /ari/channels/{id}, ${requests} sequential requests:`);
  console.log(line('local (asked of the owner)   ', latency.local));
  console.log(line('forwarded (asked of another) ', latency.forwarded));
  const live = await liveRecordingLatency(members, requests);
  console.log(`GET /ari/recordings/live/{name}, ${members.length} members, ${requests} sequential requests:`);
  console.log(line('local (asked of the holder)  ', live.local));
  console.log(line('forwarded (asked of another) ', live.forwarded));
}

// Last: everything above is initialised by now.
if (values.member !== undefined) await runTarget(JSON.parse(values.member));
else await runBench();
