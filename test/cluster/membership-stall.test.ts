// A member whose own process stalls (a loaded machine, a long collection) must not declare the
// others dead when it comes back: their heartbeats kept coming and wait unread in its socket, and
// Node runs due timers before it reads sockets. Member A here is a child process that heartbeats on
// a real nats-server -js; this process's Membership (failure_seconds 1) is blocked for 2.5 s, then
// must still list A, and declare it dead once its heartbeats really stop.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { pino } from 'pino';
import { Membership, type Member } from '../../src/cluster/membership.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { NO_NATS, until } from './cluster-fixture.ts';

const PREFIX = 'pb.stall';

/** A member that only heartbeats, every 200 ms, as Membership's heartbeat says (node "nodeA"). */
const HEARTBEATS = `
import { connect } from '@nats-io/transport-node';
const nc = await connect({ servers: process.argv[1] });
const beat = JSON.stringify({ node: 'nodeA', instance: 'a-1', asteriskId: '02:00:00:00:aa:01', ari: 'http://127.0.0.1:1/ari', load: { channels: 0, bridges: 0 }, draining: false });
setInterval(() => nc.publish('${PREFIX}.hb', beat), 200);
process.stdout.write('beating\\n');
`;

/** Blocks this process's event loop, as a loaded machine's scheduler can. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: nothing else of this process runs
  }
}

describe('cluster membership after a stall of its own process', { skip: NO_NATS }, () => {
  let nats: NatsServer;
  let nc: NatsConnection;
  let child: ChildProcess | undefined;
  let membership: Membership | undefined;
  const logLines: string[] = [];
  const down: Member[] = [];

  before(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url });
    const kv = await new Kvm(nc).create('pb_stall_members');
    const log = pino({ level: 'debug' }, new Writable({ write: (chunk, _encoding, done) => void (logLines.push(String(chunk)), done()) }));
    membership = new Membership({
      nc,
      kv,
      prefix: PREFIX,
      node: 'nodeB',
      instance: randomUUID(),
      asteriskId: '02:00:00:00:bb:01',
      ari: 'http://127.0.0.1:2/ari',
      failureSeconds: 1,
      load: () => ({ channels: 0, bridges: 0 }),
      draining: () => false,
      log,
      onDown: (member) => down.push(member),
    });
    membership.start();
    child = spawn(process.execPath, ['--input-type=module', '-e', HEARTBEATS, nats.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    await until('A heard', () => membership!.others().some((member) => member.node === 'nodeA'), 30_000);
  });

  after(async () => {
    membership?.stop();
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await nc?.close();
    await nats?.stop();
  });

  it('a 2.5 s stall with failure_seconds 1 declares nobody dead; A stopping is still noticed', async () => {
    stall(2500);
    // A few checks once the loop runs again: the first timers fire before the socket is read.
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.deepEqual(down.map((member) => member.node), [], logLines.filter((line) => line.includes('dead')).join(''));
    assert.ok(membership!.others().some((member) => member.node === 'nodeA'), 'A is still a member');

    child!.kill('SIGKILL');
    await until('A declared dead', () => down.length === 1, 30_000);
    assert.equal(down[0]!.node, 'nodeA');
    assert.ok(logLines.some((line) => line.includes('declared dead')));
  });
});
