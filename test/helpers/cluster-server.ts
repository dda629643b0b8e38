// The cluster mode of startTestServer() (PATCHBAY_TEST_CLUSTER=1, `npm run test:ari-cluster`): a
// real `nats-server -js` and three Patchbay members A, B and C with the test's own settings, and
// the test talks to B only. B is an ARI front (`cluster.place_on_self: false`, round-robin
// placement), so the channels a test originates or creates through B live on A and C in turn and
// every request about them crosses NATS: the ARI suite then checks the cluster's forwarding,
// event relaying and listings as a client sees them (docs/cluster.md, "Tests").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SuiteContext, TestContext } from 'node:test';
import type { DeepPartialYaml } from '../../src/config/config.ts';
import type { RunningServer } from '../../src/server.ts';
import { startNatsServer, type NatsServer } from './nats-server.ts';

/** Whether startTestServer() starts a cluster (the env var the npm script sets). */
export const CLUSTER_MODE = process.env.PATCHBAY_TEST_CLUSTER === '1';

/** Why a test that reaches into one server's internals cannot run through a cluster member. */
export const NOT_THROUGH_CLUSTER = 'reaches into the server object (core, files, technologies): not through a cluster member';

/** Why a test measuring audio in windows of B's media clock ticks cannot run through a cluster member. */
export const AUDIO_BY_TICKS = "measures audio in windows counted in B's media clock ticks while the channels run on A or C: the cross-member leg adds 20-50 ms and another clock";

/** `{ skip: reason }` in cluster mode, `{}` otherwise: the test count stays the same in both modes. */
export function unlessCluster(reason = NOT_THROUGH_CLUSTER): { skip?: string } {
  return CLUSTER_MODE ? { skip: reason } : {};
}

let nats: Promise<NatsServer> | undefined;
let clusters = 0;

/** One NATS server per test process, each startTestServer() a cluster of its own name on it. */
function sharedNats(): Promise<NatsServer> {
  if (!nats) {
    nats = startNatsServer();
    // Shared by every server the file starts, so no test's after() stops it: it must not keep the
    // test process alive (the runner would wait for it until the file's timeout), and it goes
    // when the process exits.
    void nats.then((server) => {
      server.process.unref();
      for (const stream of [server.process.stdin, server.process.stdout, server.process.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
      process.once('exit', () => server.process.kill('SIGKILL'));
    });
  }
  return nats;
}

export interface ClusterMembers {
  readonly a: RunningServer;
  readonly b: RunningServer;
  readonly c: RunningServer;
  /** Stops the three members (B last) and removes A's and C's data directories. */
  stop(): Promise<void>;
}

/**
 * Starts A, B and C with `config(member, dataDir)` (the test's own configuration plus the cluster
 * settings given here) and waits until B sees the other two alive, so B's first placement already
 * goes to them. `dataDirB` is the test's; A and C get temporary ones of their own, and record into
 * `sharedDirs.recordings` when given (B's recordings directory) instead of their own, and
 * play from B's sound directories.
 */
export async function startClusterMembers(start: (overrides: DeepPartialYaml, member: 'a' | 'b' | 'c') => Promise<RunningServer>, dataDirB: string, sharedDirs: { readonly sounds: readonly string[]; readonly moh: string; readonly recordings: string | undefined }): Promise<ClusterMembers> {
  const server = await sharedNats();
  clusters++;
  const name = `t${process.pid}x${clusters}`;
  const cluster = (node: string, front: boolean): NonNullable<DeepPartialYaml['cluster']> => ({
    nats_url: server.url,
    name,
    node_id: node,
    // A member of a test cluster stops and starts quickly: a short grace for heartbeats.
    failure_seconds: 3,
    ...(front ? { place_on_self: false, placement: 'round_robin' } : {}),
  });
  // Shared storage, as a deployment may mount: the tests read recordings in B's directory and put
  // sounds and music-on-hold classes into B's directories, which every member plays from.
  const recordings = { sounds: [...sharedDirs.sounds], moh: sharedDirs.moh, ...(sharedDirs.recordings === undefined ? {} : { recordings: sharedDirs.recordings }) };
  const dirA = mkdtempSync(join(tmpdir(), 'patchbay-test-a-'));
  const dirC = mkdtempSync(join(tmpdir(), 'patchbay-test-c-'));
  const started: RunningServer[] = [];
  try {
    const a = await start({ server_id: '02:00:00:0a:00:01', dirs: { data: dirA, ...recordings }, http: { port: 0 }, sip: { port: 0 }, cluster: cluster('a', false) }, 'a');
    started.push(a);
    const c = await start({ server_id: '02:00:00:0c:00:03', dirs: { data: dirC, ...recordings }, http: { port: 0 }, sip: { port: 0 }, cluster: cluster('c', false) }, 'c');
    started.push(c);
    const b = await start({ dirs: { data: dataDirB }, cluster: cluster('b', true) }, 'b');
    started.push(b);
    const deadline = Date.now() + 20_000;
    while ((b.cluster?.status().members.length ?? 0) < 3) {
      if (Date.now() > deadline) throw new Error('cluster members A and C not seen by B within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return {
      a,
      b,
      c,
      async stop() {
        await Promise.all([a.stop(), c.stop()]);
        await b.stop();
        rmSync(dirA, { recursive: true, force: true });
        rmSync(dirC, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const member of started.reverse()) await member.stop().catch(() => undefined);
    rmSync(dirA, { recursive: true, force: true });
    rmSync(dirC, { recursive: true, force: true });
    throw err;
  }
}

/** What a cleanup after a failed test needs of the test server (test/helpers/server.ts's TestServer). */
export interface CleanableServer {
  ari(path: string, init?: { method?: string }): Promise<Response>;
  allChannels(): ReadonlyArray<{ readonly id: string }>;
}

/**
 * In cluster mode, after each test: a test that failed before its own hang-ups leaves channels and
 * bridges on A and C, and every later test's leak check would then fail on them. They are hung up
 * and destroyed through B's ARI (what a client would do), so one failure stays one failure.
 */
export async function cleanUpAfterFailureInCluster(server: CleanableServer | undefined, context: TestContext | SuiteContext): Promise<void> {
  // Only after a failure: what a passing test leaves stays for the leak checks to see.
  if (!CLUSTER_MODE || !server || !('passed' in context) || context.passed) return;
  const leftover = server.allChannels().map((channel) => channel.id);
  const listed = await server.ari('/bridges').then((response) => (response.ok ? response.json() : []), () => []);
  const bridgeIds = Array.isArray(listed) ? listed.map((bridge: { id?: unknown }) => String(bridge.id)) : [];
  if (leftover.length === 0 && bridgeIds.length === 0) return;
  for (const id of leftover) await server.ari(`/channels/${encodeURIComponent(id)}`, { method: 'DELETE' }).catch(() => undefined);
  for (const id of bridgeIds) await server.ari(`/bridges/${encodeURIComponent(id)}`, { method: 'DELETE' }).catch(() => undefined);
  const deadline = Date.now() + 10_000;
  while (server.allChannels().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}
