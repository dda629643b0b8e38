// What the cluster suites set up alike: a skip reason when nats-server is missing, polling for a
// state that crosses NATS, a temporary directory holding the suite's dialplan, the settings of one
// member, a member in a process of its own (for the suites that kill one abruptly), and a member's
// /admin/cluster view. Each suite keeps its own dialplan, ids and assertions.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { natsServerInstalled } from '../helpers/nats-server.ts';
import { AUTH, startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

// The suites read loosely typed JSON answers and events.
export type Json = Record<string, any>;

/** The `skip` of a suite that needs a real nats-server; false when it is installed. */
export const NO_NATS: string | false = natsServerInstalled() ? false : 'nats-server is not installed (apt-get install nats-server)';

/**
 * Polls `check` every `everyMs` until it answers true, failing after `timeoutMs` (bounded: on a
 * loaded machine what crosses NATS is slow, never stuck).
 */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A temporary directory named `prefix…` holding `extensions.conf` with `dialplan`. */
export function dialplanDir(prefix: string, dialplan: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'extensions.conf'), dialplan);
  return dir;
}

/** A member's settings: its server id, the suite's dialplan in `dir`, and the cluster on `natsUrl` (plus `cluster`'s own keys). */
export function memberSettings(natsUrl: string, dir: string, node: string, serverId: string, cluster: Json = {}): Json {
  return { server_id: serverId, dialplan: { file: join(dir, 'extensions.conf') }, cluster: { nats_url: natsUrl, node_id: node, ...cluster } };
}

/** A suite's three members by name, set as each starts (a failed start leaves the rest undefined). */
export type ThreeMembers = Record<'a' | 'b' | 'c', TestServer | undefined>;

/**
 * Starts members A, B and C in turn on the suite's dialplan in `dir` (server ids
 * 02:00:00:00:<idDigit>0:01, …1:01, …2:01, so suites do not share one), then waits until each sees
 * all three and knows `app`, whose event socket the caller opened on its home.
 */
export async function startThreeMembers(servers: ThreeMembers, natsUrl: string, dir: string, idDigit: number, cluster: Json): Promise<void> {
  let n = 0;
  for (const name of ['a', 'b', 'c'] as const) {
    servers[name] = await startTestServer(memberSettings(natsUrl, dir, `node${name.toUpperCase()}`, `02:00:00:00:${idDigit}${n++}:01`, cluster));
  }
}

/** Each member sees all three and knows `app` (its home's subscription has reached NATS). */
export async function untilThreeKnow(servers: ThreeMembers, app: string): Promise<void> {
  for (const server of [servers.a!, servers.b!, servers.c!]) {
    await untilMembersSeen(server.url, 3);
    await untilApplicationKnown(server, app);
  }
}

/** Stops C, then B, then A: those that started. */
export async function stopThreeMembers(servers: ThreeMembers): Promise<void> {
  for (const server of [servers.c, servers.b, servers.a]) await server?.stop();
}

/** What a member answers on /admin/cluster (members, contacts, media legs, shared state…). */
export async function clusterStatus(url: string): Promise<Json> {
  return (await (await fetch(`${url}/admin/cluster`, { headers: { authorization: AUTH } })).json()) as Json;
}

/** How many media legs a member holds. */
export async function mediaLegsHeld(url: string): Promise<number> {
  return (await clusterStatus(url)).media_legs.held;
}

/** A member in a process of its own (node-process.ts), with the URL it serves on once it is ready. */
export interface MemberProcess {
  readonly child: ChildProcess;
  readonly url: string;
}

/** Starts a member with `settings` in a process of its own and waits (at most 60 s) until it serves. */
export async function startMemberProcess(settings: Json): Promise<MemberProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'node-process.ts'), JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`node A did not start: ${out}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`node A exited (${code}): ${out}`)));
  });
  return { child, url };
}

/** The next event of `type` about channel `channelId` on `socket`, skipping others (at most `timeoutMs`). */
export async function nextChannelEvent(socket: EventSocket, type: string, channelId: string, timeoutMs: number): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const message = (await socket.next(Math.max(1, deadline - Date.now()))) as Json;
    if (message.type === type && message.channel?.id === channelId) return message;
  }
}

/** Waits until the member at `url` sees `count` members alive (heartbeats cross NATS a moment after a start). */
export async function untilMembersSeen(url: string, count: number, everyMs = 100): Promise<void> {
  await until(`${count} members seen from ${url}`, async () => (await clusterStatus(url)).members.length === count, 20_000, everyMs);
}

/** Waits until `server` knows application `app` (its home's subscription has reached NATS). */
export async function untilApplicationKnown(server: { readonly url: string; ari(path: string): Promise<Response> }, app: string, everyMs = 100): Promise<void> {
  await until(`${app} known through ${server.url}`, async () => (await server.ari(`/applications/${app}`)).status === 200, 20_000, everyMs);
}
