// Call parking as desk phones use it on Asterisk (res_parking): alice calls bob through Dial(); bob
// blind-transfers her (REFER) to the lot's parkext 700 and she is parked at 701 — in the lot's
// holding bridge (ARI: holding, holding_bridge, named like the lot), hearing music on hold on her
// RTP, with park:701@parkedcalls InUse (the hint of 100 InUse), while bob's call ends; carol dials
// 701 and is in a call with alice (RTP both ways) and the space is free again. A lot with a short
// parkingtime sends the parked call back to its parker: PARKER, PARKER_FLAT, PARKING_SPACE and
// PARKEDLOT are set, and the park-dial extension's Dial() rings bob again.
// The phones are raw-phone.ts (real SIP over UDP with RTP sockets the test reads and writes).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { RawPhone, type PhoneDialog } from './raw-phone.ts';
import { answeredInvite, channelsDrained, eventsUntilMatch } from './raw-phone-suite.ts';
import { PacedRtpSender } from './paced-rtp-sender.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let work: string;
let server: TestServer;
let events: EventSocket;
const alice = new RawPhone('alice');
const bob = new RawPhone('bob');
const carol = new RawPhone('carol');

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'patchbay-parking-'));
  const asteriskDir = join(work, 'asterisk');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(asteriskDir);
  writeFileSync(
    join(asteriskDir, 'res_parking.conf'),
    [
      '[general]',
      '[default]',
      'parkext => 700',
      'parkpos => 701-703',
      'context => parkedcalls',
      'parkingtime => 300',
      'parkinghints = yes',
      '[quick]',
      'parkext => 710',
      'parkext_exclusive = yes',
      'parkpos => 711-712',
      'context => parkedcalls',
      'parkingtime => 2',
      'comebackdialtime => 20',
      '',
    ].join('\n'),
  );
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, ['[phones]', 'include => parkedcalls', 'exten => 200,1,Dial(PJSIP/bob,20)', ' same => n,Hangup()', 'exten => 100,hint,park:701@parkedcalls', ''].join('\n'));
  for (const phone of [alice, bob, carol]) await phone.open();
  const endpoint = (name: string) => ({ context: 'phones', allow: 'ulaw', aors: name });
  server = await startTestServer(
    {
      asterisk_config_dir: asteriskDir,
      config_objects: {
        res_pjsip: {
          endpoint: { alice: endpoint('alice'), bob: endpoint('bob'), carol: endpoint('carol') },
          aor: Object.fromEntries([alice, bob, carol].map((phone) => [phone.user, { contact: `sip:${phone.user}@127.0.0.1:${phone.sipPort}` }])),
        },
      },
      dialplan: { file: dialplanFile },
    } as never,
  );
  for (const phone of [alice, bob, carol]) phone.serverPort = server.core.pjsip.port;
  events = await server.events('app=watcher&subscribeAll=true');
});

after(async () => {
  for (const phone of [alice, bob, carol]) phone.close();
  await events.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

const eventsUntil = (match: (event: Json) => boolean, timeoutMs = 20_000): Promise<Json[]> => eventsUntilMatch(events, match, timeoutMs);

const named = (prefix: string) => (channel: Json | undefined) => String(channel?.name ?? '').startsWith(prefix);

const answered = (phone: RawPhone): Promise<PhoneDialog> => answeredInvite(phone, 15_000);

/** Waits until the channels of this test are gone, so the next one starts from nothing. */
const drained = (): Promise<void> => channelsDrained(server, events, 20_000);

async function deviceState(name: string): Promise<string> {
  const response = await server.ari(`/deviceStates/${encodeURIComponent(name)}`);
  return ((await response.json()) as Json).state;
}

/** Polls until `check` holds (bounded); the assertion after it says what was missing. */
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Packets received since `from` whose payload is mostly `byte` (a constant u-law level the other phone sends). */
const heard = (phone: RawPhone, from: number, byte: number): number =>
  phone.received.filter((packet) => packet.at >= from && packet.payloadType === 0 && packet.payload.filter((b) => b === byte).length > packet.payload.length / 2).length;

/** The server's RTP port in a response's SDP. */
const mediaPort = (message: string): number => Number(/^m=audio (\d+)/m.exec(message)?.[1]);

/** Sends a constant u-law level from `phone` until `done()` or the bound. */
async function sendLevel(phone: RawPhone, port: number, byte: number, done: () => boolean): Promise<void> {
  const sender = new PacedRtpSender(phone, port, 0x1000 + byte, { sequence: 1, timestamp: 0 });
  const deadline = Date.now() + 20_000;
  while (!done() && Date.now() < deadline) {
    await sender.send(0, Buffer.alloc(160, byte));
    sender.timestamp += 160;
  }
}

describe('call parking (res_parking) with SIP phones', () => {
  beforeEach(drained);

  test('bob parks alice by a blind transfer to 700; she hears music at 701 (InUse); carol dials 701 and talks with her', { timeout: 120_000 }, async () => {
    const bobIn = answered(bob);
    const call = await alice.call('200');
    assert.match(call.final, /^SIP\/2\.0 200/);
    const bobDialog = await bobIn;
    await eventsUntil((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/alice-')(e.channel));
    assert.equal(await deviceState('park:701@parkedcalls'), 'NOT_INUSE');
    const referAt = Date.now();
    assert.match(await bob.request(bobDialog, 'REFER', ['Refer-To: <sip:700@127.0.0.1>', 'Referred-By: <sip:bob@127.0.0.1>']), /^SIP\/2\.0 202/);
    const frames = await eventsUntil((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/alice-')(e.channel) && e.bridge.bridge_type === 'holding');
    const parked = frames.at(-1)!;
    assert.deepEqual([parked.bridge.technology, parked.bridge.bridge_class, parked.bridge.creator, parked.bridge.name], ['holding_bridge', 'parking', 'Parking', 'default']);
    const inUse = frames.find((e) => e.type === 'DeviceStateChanged' && e.device_state.name === 'park:701@parkedcalls');
    assert.equal(inUse?.device_state.state, 'INUSE', 'the space turned InUse as alice was parked');
    assert.equal(await deviceState('park:701@parkedcalls'), 'INUSE');
    assert.equal(server.core.extensionStates.state('100', 'phones'), 'INUSE', 'the hint park:701@parkedcalls');
    assert.ok(!frames.some((e) => e.type === 'ChannelDestroyed' && named('PJSIP/bob-')(e.channel)), 'bob stays up to hear the space, as Asterisk\'s parker');
    // The transfer succeeded: the sipfrag 200 reaches bob, who hears the space (SayDigits 701), then his channel is hung up.
    await bob.nextMessage(/^NOTIFY /, 15_000, (m) => /SIP\/2\.0 200/.test(m.split('\r\n\r\n')[1] ?? ''));
    const bobGone = await eventsUntil((e) => e.type === 'ChannelDestroyed' && named('PJSIP/bob-')(e.channel));
    assert.equal(bobGone.filter((e) => e.type === 'ChannelHangupRequest' && named('PJSIP/bob-')(e.channel)).length, 0, 'hung up without a request, as a transferer');
    assert.ok(bob.audioBetween(referAt, Date.now()).some((sample) => Math.abs(sample) > 2000), 'bob heard the space');
    assert.match(await bob.request(bobDialog, 'BYE'), /^SIP\/2\.0 (200|481)/);
    // Music on hold reaches alice's RTP socket: packets after she was parked carrying sound.
    const parkedAt = Date.now();
    await until(() => alice.audioBetween(parkedAt, Date.now()).some((sample) => Math.abs(sample) > 2000));
    assert.ok(alice.audioBetween(parkedAt, Date.now()).some((sample) => Math.abs(sample) > 2000), 'alice hears music on hold');
    // carol retrieves her by dialling the space.
    const retrieval = await carol.call('701');
    assert.match(retrieval.final, /^SIP\/2\.0 200/);
    const bridged = await eventsUntil((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/carol-')(e.channel));
    assert.equal(bridged.at(-1)!.bridge.bridge_type, 'mixing');
    assert.ok(bridged.some((e) => e.type === 'ChannelLeftBridge' && named('PJSIP/alice-')(e.channel) && e.bridge.bridge_type === 'holding'), 'alice left the lot');
    assert.ok(bridged.some((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/alice-')(e.channel) && e.bridge.id === bridged.at(-1)!.bridge.id), 'alice is in carol\'s bridge');
    assert.equal(await deviceState('park:701@parkedcalls'), 'NOT_INUSE');
    // RTP both ways: each phone hears the level the other sends.
    const since = Date.now();
    const aliceToCarol = sendLevel(alice, mediaPort(call.final), 0x80, () => heard(carol, since, 0x80) > 5);
    const carolToAlice = sendLevel(carol, mediaPort(retrieval.final), 0x00, () => heard(alice, since, 0x00) > 5);
    await Promise.all([aliceToCarol, carolToAlice]);
    assert.ok(heard(carol, since, 0x80) > 5, 'carol hears alice');
    assert.ok(heard(alice, since, 0x00) > 5, 'alice hears carol');
    assert.match(await alice.request(call.dialog, 'BYE'), /^SIP\/2\.0 200/);
    await carol.nextMessage(/^BYE /, 15_000);
    await drained();
  });

  test('a parked call whose time is up rings its parker back through park-dial with PARKER, PARKER_FLAT, PARKING_SPACE, PARKEDLOT', { timeout: 120_000 }, async () => {
    const bobIn = answered(bob);
    const call = await alice.call('200');
    assert.match(call.final, /^SIP\/2\.0 200/);
    const bobDialog = await bobIn;
    await eventsUntil((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/alice-')(e.channel));
    const bobAgain = answered(bob);
    assert.match(await bob.request(bobDialog, 'REFER', ['Refer-To: <sip:710@127.0.0.1>']), /^SIP\/2\.0 202/);
    const parked = (await eventsUntil((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/alice-')(e.channel) && e.bridge.bridge_type === 'holding')).at(-1)!;
    assert.equal(parked.bridge.name, 'quick');
    assert.equal(await deviceState('park:711@parkedcalls'), 'INUSE');
    await bob.nextMessage(/^NOTIFY /, 15_000, (m) => /SIP\/2\.0 200/.test(m.split('\r\n\r\n')[1] ?? ''));
    assert.match(await bob.request(bobDialog, 'BYE'), /^SIP\/2\.0 (200|481)/);
    // Two seconds later alice leaves the lot and her dialplan dials bob again.
    const back = await eventsUntil((e) => e.type === 'ChannelDialplan' && named('PJSIP/alice-')(e.channel) && e.channel.dialplan.context === 'park-dial');
    const variables = Object.fromEntries(back.filter((e) => e.type === 'ChannelVarset' && named('PJSIP/alice-')(e.channel)).map((e) => [e.variable, e.value]));
    assert.deepEqual([variables.PARKING_SPACE, variables.PARKEDLOT, variables.PARKER, variables.PARKER_FLAT], ['711', 'quick', 'PJSIP/bob', 'PJSIP_bob']);
    assert.deepEqual([back.at(-1)!.channel.dialplan.exten, back.at(-1)!.channel.dialplan.app_name, back.at(-1)!.channel.dialplan.app_data], ['PJSIP_bob', 'Dial', 'PJSIP/bob,20']);
    const again = await bobAgain;
    assert.ok(again.callId, 'bob is rung again');
    assert.equal(await deviceState('park:711@parkedcalls'), 'NOT_INUSE');
    assert.match(await alice.request(call.dialog, 'BYE'), /^SIP\/2\.0 200/);
    await bob.nextMessage(/^BYE /, 15_000);
    await drained();
  });
});
