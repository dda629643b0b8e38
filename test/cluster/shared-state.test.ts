// Global variables and the astdb cluster-wide: writes on one member (ARI /asterisk/variable,
// Set(GLOBAL()), Set(DB()), DB_DELETE, DBdeltree) are read on the other; a member that joins later
// gets what was written before; racing writes to one name end equal everywhere; hostile bucket
// entries are ignored. A real nats-server -js; both members in this process.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { sharedKey } from '../../src/cluster/shared-state.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { dialplanDir, type Json, memberSettings, NO_NATS, until } from './cluster-fixture.ts';

const DIALPLAN = `[shared]
exten => write,1,Set(GLOBAL(FROM_DIALPLAN)=on-a)
 same => n,Set(DB(people/alice)=5551234)
 same => n,Set(DB(people/bob)=5559876)
 same => n,Set(DB(people/carol/desk)=12)
 same => n,Hangup()
exten => remove,1,Set(gone=\${DB_DELETE(people/alice)})
 same => n,DBdeltree(people/carol)
 same => n,Hangup()
`;

const skip = NO_NATS;

describe('global variables and astdb across cluster members', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let a: TestServer;
  let b: TestServer | undefined;
  let nc: NatsConnection;

  const settings = (node: string, serverId: string): Json => memberSettings(nats.url, dir, node, serverId, { failure_seconds: 3 });
  const globalOn = async (server: TestServer, name: string): Promise<string> => ((await (await server.ari(`/asterisk/variable?variable=${name}`)).json()) as Json).value;

  before(async () => {
    dir = dialplanDir('patchbay-cluster-shared-', DIALPLAN);
    nats = await startNatsServer();
    a = await startTestServer(settings('nodeA', '02:00:00:00:2a:01'));
    nc = await connect({ servers: nats.url });
  });

  after(async () => {
    await nc?.close();
    await b?.stop();
    await a?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a member that joins later finds what was written before it came', async () => {
    assert.equal((await a.ari('/asterisk/variable?variable=EARLY&value=before-b', { method: 'POST' })).status, 204);
    a.core.astdb.put('early', 'key', 'before-b');
    b = await startTestServer(settings('nodeB', '02:00:00:00:2b:01'));
    const joined = b;
    await until('B has the earlier global variable', async () => (await globalOn(joined, 'EARLY')) === 'before-b');
    await until('B has the earlier astdb entry', () => joined.core.astdb.get('early', 'key') === 'before-b');
  });

  it('an ARI global variable set on A is read on B, and unset there too', async () => {
    const joined = b!;
    assert.equal((await a.ari('/asterisk/variable?variable=QUEUE_MODE&value=night', { method: 'POST' })).status, 204);
    await until('B reads QUEUE_MODE', async () => (await globalOn(joined, 'QUEUE_MODE')) === 'night');
    // And back the other way.
    assert.equal((await joined.ari('/asterisk/variable?variable=QUEUE_MODE&value=day', { method: 'POST' })).status, 204);
    await until('A reads the value B wrote', async () => (await globalOn(a, 'QUEUE_MODE')) === 'day');
    joined.core.globalVars.set('QUEUE_MODE', undefined);
    await until('A sees it unset', async () => (await globalOn(a, 'QUEUE_MODE')) === '');
  });

  it("the dialplan's GLOBAL(), DB(), DB_DELETE and DBdeltree on A reach B", async () => {
    const joined = b!;
    assert.equal((await a.ari('/channels?endpoint=Local/write@shared&app=none&channelId=w1&otherChannelId=w1-2', { method: 'POST' })).status, 200);
    await until('B reads the dialplan writes', async () =>
      (await globalOn(joined, 'FROM_DIALPLAN')) === 'on-a' && joined.core.astdb.get('people', 'alice') === '5551234' && joined.core.astdb.get('people', 'carol/desk') === '12');
    assert.equal((await a.ari('/channels?endpoint=Local/remove@shared&app=none&channelId=r1&otherChannelId=r1-2', { method: 'POST' })).status, 200);
    await until('B sees the removals', () => joined.core.astdb.get('people', 'alice') === undefined && joined.core.astdb.get('people', 'carol/desk') === undefined);
    assert.equal(joined.core.astdb.get('people', 'bob'), '5559876', 'what was not removed stays');
  });

  it('racing writes to one name from both members end with the same value on both', async () => {
    const joined = b!;
    for (let round = 0; round < 20; round++) {
      a.core.globalVars.set('RACE', `a${round}`);
      joined.core.globalVars.set('RACE', `b${round}`);
      a.core.astdb.put('race', 'key', `a${round}`);
      joined.core.astdb.put('race', 'key', `b${round}`);
    }
    await until('both members agree on RACE', () =>
      a.core.globalVars.get('RACE') === joined.core.globalVars.get('RACE') && a.core.astdb.get('race', 'key') === joined.core.astdb.get('race', 'key'));
    // Settled: a last write from one side is the value on both.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(a.core.globalVars.get('RACE'), joined.core.globalVars.get('RACE'));
    assert.match(String(a.core.globalVars.get('RACE')), /^[ab]19$/);
  });

  it('hostile entries in the buckets are ignored, and the members go on sharing', async () => {
    const joined = b!;
    const globals = await new Kvm(nc).open('pb_patchbay_globals');
    const astdb = await new Kvm(nc).open('pb_patchbay_astdb');
    await globals.put('x', 'not json');
    await globals.put(sharedKey('OTHER'), JSON.stringify({ name: 'HIJACK', value: '1', origin: 'evil' }));
    await globals.put(sharedKey('BAD NAME'), JSON.stringify({ name: 'BAD NAME', value: 1, origin: 'evil' }));
    await globals.put(sharedKey('HUGE'), JSON.stringify({ name: 'HUGE', value: 'x'.repeat(200_000), origin: 'evil' }));
    await astdb.put(sharedKey('no-slash'), JSON.stringify({ name: 'no-slash', value: 'v', origin: 'evil' }));
    assert.equal((await a.ari('/asterisk/variable?variable=AFTER&value=fine', { method: 'POST' })).status, 204);
    await until('B still follows A', async () => (await globalOn(joined, 'AFTER')) === 'fine');
    assert.equal(joined.core.globalVars.get('HIJACK'), undefined);
    assert.equal(joined.core.globalVars.get('HUGE'), undefined);
    assert.equal(joined.core.astdb.get('no-slash', 'v'), undefined);
  });
});
