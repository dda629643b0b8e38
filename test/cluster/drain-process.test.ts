// `patchbay stop --gracefully` on a cluster member, for real: member A is the server's own process
// (src/main.ts, its pidfile and signals), member B is in this process. While A drains, B sees it
// draining (cluster status, /metrics, the members bucket), new work asked of A through B is refused
// with 503, A's call goes on and is hung up through B; then A exits by itself and B takes it out as
// having left, not died. A real nats-server -js.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { readPidFile } from '../../src/cli/pidfile.ts';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { dialplanDir, type Json, NO_NATS, until as pollUntil } from './cluster-fixture.ts';

const ADMIN_MAIN = fileURLToPath(new URL('../../src/cli/admin-main.ts', import.meta.url));
const SERVER_MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
const DIALPLAN = `[drain]
exten => park,1,Answer()
 same => n,Wait(300)
exten => hang,1,Hangup()
`;

interface Spawned {
  readonly child: ReturnType<typeof spawn>;
  readonly output: () => string;
  readonly done: Promise<number | null>;
}

function spawnNode(args: string[], env: NodeJS.ProcessEnv, cwd: string): Spawned {
  const base = { ...process.env };
  for (const name of ['PATCHBAY_CONFIG', 'PATCHBAY_HTTP_PORT', 'PATCHBAY_HTTP_BIND', 'PATCHBAY_DATA_DIR', 'PATCHBAY_ARI_USER', 'PATCHBAY_ARI_PASSWORD', 'PATCHBAY_URL', 'PATCHBAY_CLUSTER_NATS_URL']) delete base[name];
  const child = spawn(process.execPath, ['--import', TSX, ...args], { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  return { child, output: () => output, done: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

/** Waits 30 s by default: the members here start as processes of their own. */
const until = (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> => pollUntil(what, check, timeoutMs);

function freeTcpPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const skip = NO_NATS;

describe('patchbay stop --gracefully on a cluster member', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let b: TestServer;
  let a: Spawned | undefined;
  let nc: NatsConnection;
  let aEnv: NodeJS.ProcessEnv;

  before(async () => {
    dir = dialplanDir('patchbay-cluster-drain-', DIALPLAN);
    nats = await startNatsServer();
    const port = await freeTcpPort();
    writeFileSync(join(dir, 'a.yaml'), [
      'server_id: 02:00:00:00:4a:01',
      'http: { bind: 127.0.0.1 }',
      'sip: { port: 0 }',
      `dialplan: { file: ${JSON.stringify(join(dir, 'extensions.conf'))} }`,
      // A leaves with a last heartbeat that says so (no wait on failure_seconds); 10 s keeps a
      // member process stalled for seconds on a loaded machine from being declared dead instead.
      `cluster: { nats_url: ${JSON.stringify(nats.url)}, node_id: nodeA, failure_seconds: 10 }`,
      '',
    ].join('\n'));
    aEnv = { PATCHBAY_CONFIG: join(dir, 'a.yaml'), PATCHBAY_HTTP_PORT: String(port), PATCHBAY_DATA_DIR: join(dir, 'data-a') };
    a = spawnNode([SERVER_MAIN], aEnv, dir);
    b = await startTestServer({ server_id: '02:00:00:00:4b:01', dialplan: { file: join(dir, 'extensions.conf') }, cluster: { nats_url: nats.url, node_id: 'nodeB', failure_seconds: 10 } });
    nc = await connect({ servers: nats.url });
    await until('B sees A', async () => ((await admin('cluster')).members as Json[]).some((m) => m.node === 'nodeA'), 60_000);
    await until('A wrote its pidfile', () => readPidFile(join(dir, 'data-a')) !== null);
  });

  after(async () => {
    if (a && a.child.exitCode === null) a.child.kill('SIGKILL');
    await nc?.close();
    await b?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const admin = async (path: string): Promise<any> => (await fetch(`${b.url}/admin/${path}`, { headers: { authorization: AUTH } })).json();
  const memberA = async (): Promise<Json | undefined> => ((await admin('cluster')).members as Json[]).find((m) => m.node === 'nodeA');

  it('drains: B sees it, new work for A is refused, A\'s call goes on, then A leaves', async () => {
    const placed = await b.ari('/channels?endpoint=Local/park@drain&extension=park&context=drain&cluster_node=nodeA', { method: 'POST' });
    assert.equal(placed.status, 200, await placed.clone().text());
    const onA = ((await placed.json()) as Json).id as string;
    assert.equal(placed.headers.get('x-patchbay-node'), 'nodeA');

    const stopper = spawnNode([ADMIN_MAIN, 'stop', '--gracefully'], aEnv, dir);
    await until('B sees A draining', async () => (await memberA())?.draining === true);
    const entry = await (await new Kvm(nc).open('pb_patchbay_members')).get('nodeA');
    assert.equal((JSON.parse(entry!.string()) as Json).draining, true, 'the members bucket says A drains');
    assert.match(await (await fetch(`${b.url}/metrics`)).text(), /patchbay_cluster_member_draining\{member="nodeA"\} 1/);
    const status = spawnNode([ADMIN_MAIN, 'cluster', 'status'], { PATCHBAY_HTTP_PORT: String(b.address.port) }, dir);
    assert.equal(await status.done, 0, status.output());
    assert.match(status.output(), /nodeA\s.*\sdraining\s/);

    const refused = await b.ari('/channels?endpoint=Local/hang@drain&extension=hang&context=drain&cluster_node=nodeA', { method: 'POST' });
    assert.equal(refused.status, 503);
    assert.match(((await refused.json()) as Json).message, /shutting down gracefully/);
    const snoop = await b.ari(`/channels/${onA}/snoop?spy=in&app=drainapp`, { method: 'POST' });
    assert.equal(snoop.status, 503, await snoop.clone().text());
    assert.equal(((await (await b.ari(`/channels/${onA}`)).json()) as Json).state, 'Up', 'A\'s call goes on');
    assert.equal(a!.child.exitCode, null, 'A still runs while its call is up');

    assert.equal((await b.ari(`/channels/${onA}`, { method: 'DELETE' })).status, 204);
    assert.equal(await stopper.done, 0, stopper.output());
    assert.equal(await a!.done, 0, a!.output().slice(-2000));
    await until('B takes A out', async () => (await memberA()) === undefined);
    assert.ok(b.logLines.some((line) => line.includes('cluster member left')), 'B saw A leave');
    assert.ok(!b.logLines.some((line) => line.includes('declared dead')), 'not a death');
  });
});
