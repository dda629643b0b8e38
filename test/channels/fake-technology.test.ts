// A channel technology written only here, through the public seam (src/core/channels/technology.ts):
// a fake far end that places calls into the server (an inbound channel it creates enters the
// dialplan, whose `1000` hands it to Stasis), receives the calls the server places (originate to
// FAKE/...), carries frames both ways, and is torn down by stop(). It also adds to the dialplan
// what a technology may: a function (FAKE_LABEL), an application (FakeNote), the states of its
// devices (ChanIsAvail) and its own CHANNEL(fake,item) items. No file of src/ knows it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { ChannelDriver, ChannelRequest, ChannelTechnology, Indication, TechnologyContext } from '../../src/core/channels/technology.ts';
import type { DeviceStateValue } from '../../src/core/device-states.ts';
import { InvalidError } from '../../src/core/errors.ts';
import type { Frame } from '../../src/media/frame.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const APP = 'fake-app';

/** One call's far end: what the server sent it, and a tone it sends back on every media tick. */
class FakeFarEnd implements ChannelDriver {
  readonly received: number[] = [];
  readonly digits: string[] = [];
  readonly indications: Indication[] = [];
  hungUpWith: number | undefined;
  /** The value of every sample this far end sends while `sending` is set. */
  sending: number | undefined;
  /** What the dialplan wrote with FAKE_LABEL() and noted with FakeNote(). */
  label = '';
  readonly notes: string[] = [];
  readonly #frame: Frame = { rate: 8000, samples: new Int16Array(160) };

  constructor(
    readonly channel: Channel,
    private readonly answersCalls: boolean,
  ) {}

  call(): void {
    // Rings, then answers, as a phone would.
    this.channel.remoteIndication('ringing');
    if (this.answersCalls) setTimeout(() => this.channel.remoteIndication('answer'), 20);
  }

  answer(): void {}

  hangup(cause: number): void {
    this.hungUpWith = cause;
  }

  indicate(indication: Indication): void {
    this.indications.push(indication);
  }

  sendDigit(digit: string): void {
    this.digits.push(digit);
  }

  writeFrame(frame: Frame): void {
    this.received.push(frame.samples[0]);
  }

  /** CHANNEL(fake,digits): the digits the server sent this far end. */
  channelInfo(item: string): string | undefined {
    return item === 'digits' ? this.digits.join('') : undefined;
  }

  /** One media tick: the far end's audio. */
  tick(): void {
    if (this.sending === undefined || this.channel.hangingUp) return;
    this.#frame.samples.fill(this.sending);
    this.channel.deliver(this.#frame);
  }
}

class FakeTechnology implements ChannelTechnology {
  readonly name = 'FAKE';
  readonly description = 'A fake far end for tests';
  readonly module = { name: 'chan_fake.so', description: 'Fake Channel Driver' };
  readonly farEnds = new Map<string, FakeFarEnd>();
  context: TechnologyContext | undefined;
  starts = 0;
  stops = 0;
  #sequence = 0;
  readonly #tick = (): void => {
    for (const farEnd of this.farEnds.values()) farEnd.tick();
  };

  start(context: TechnologyContext): void {
    this.context = context;
    this.starts += 1;
    context.media.onTick(this.#tick);
    context.registerFunction({
      name: 'FAKE_LABEL',
      syntax: 'FAKE_LABEL()',
      summary: 'The label of a FAKE channel',
      docsSection: 'Fake',
      read: (call) => (call.channel ? this.#farEndOf(call.channel).label : undefined),
      write: (call, value) => {
        if (!call.channel) throw new InvalidError('FAKE_LABEL() needs a channel');
        this.#farEndOf(call.channel).label = value;
      },
    });
    context.registerApplication({
      name: 'FakeNote',
      synopsis: 'Notes its argument on the FAKE channel',
      execute: (channel, _args, _services, rawData) => {
        this.farEnds.get(channel.id)?.notes.push(rawData);
        return 'next';
      },
    });
  }

  /** `busy-*` devices are busy, `gone-*` ones unavailable; of the others it has nothing to say. */
  deviceState(resource: string): DeviceStateValue | undefined {
    if (resource.startsWith('busy-')) return 'BUSY';
    if (resource.startsWith('gone-')) return 'UNAVAILABLE';
    return undefined;
  }

  #farEndOf(channel: Channel): FakeFarEnd {
    const farEnd = this.farEnds.get(channel.id);
    if (!farEnd) throw new InvalidError('not a FAKE channel');
    return farEnd;
  }

  stop(): void {
    this.context?.media.offTick(this.#tick);
    this.context = undefined;
    this.stops += 1;
    this.farEnds.clear();
  }

  #create(resource: string, direction: 'inbound' | 'outbound', id?: string): Channel {
    const context = this.context;
    if (!context) throw new Error('FAKE is not running');
    this.#sequence += 1;
    let farEnd: FakeFarEnd | undefined;
    const channel = context.channels.create(
      { id, name: `FAKE/${resource}-${this.#sequence}`, technology: this.name, direction, state: direction === 'inbound' ? 'Ring' : 'Down' },
      (created) => (farEnd = new FakeFarEnd(created, direction === 'outbound')),
    );
    this.farEnds.set(channel.id, farEnd!);
    channel.once('hangup', () => this.farEnds.delete(channel.id));
    return channel;
  }

  /** The server places a call to FAKE/<resource>. */
  request(request: ChannelRequest): Channel {
    return this.#create(request.resource, 'outbound', request.channelId);
  }

  /** The far end calls in: an inbound channel in Ring, handed to the dialplan at `exten`. */
  incoming(exten: string, caller: string): Channel {
    const channel = this.#create(caller, 'inbound');
    channel.setCaller({ number: caller });
    this.context!.enterDialplan(channel, { context: 'default', exten, priority: 1 });
    return channel;
  }
}

type Json = Record<string, any>;

let server: TestServer;
let fake: FakeTechnology;
let appEvents: EventSocket;
let testApp: EventSocket;

before(async () => {
  fake = new FakeTechnology();
  server = await startTestServer({}, { technologies: [fake] });
  appEvents = await server.events(`app=${APP}`);
  testApp = await server.events('app=test-app');
});

after(async () => {
  await appEvents?.close();
  await testApp?.close();
  await server?.stop();
});

async function ari(path: string, method = 'POST', status = 200): Promise<Json> {
  const response = await server.ari(path, { method });
  assert.equal(response.status, status, `${method} ${path}: ${await response.clone().text()}`);
  return status === 204 ? {} : ((await response.json()) as Json);
}

async function nextFor(socket: EventSocket, type: string, channelId: string): Promise<Json> {
  for (;;) {
    const event: Json = await socket.nextOfType(type, 3000);
    if (event.channel?.id === channelId) return event;
  }
}

async function waitUntil(what: string, condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a technology written outside the core', () => {
  test('registers as a module, started with its context', async () => {
    assert.equal(fake.starts, 1);
    assert.ok(fake.context);
    const modules = (await ari('/asterisk/modules', 'GET')) as unknown as Json[];
    assert.equal(modules.find((module) => module.name === 'chan_fake.so')?.status, 'Running');
  });

  test('an inbound call enters the dialplan, which hands it to Stasis', async () => {
    const channel = fake.incoming('1000', '5551234');
    const start = await nextFor(testApp, 'StasisStart', channel.id);
    assert.deepEqual(start.args, ['dialplan']);
    assert.equal(start.channel.name, channel.name);
    assert.equal(start.channel.caller.number, '5551234');
    assert.equal(start.channel.state, 'Up', 'the dialplan answered it');
    await ari(`/channels/${channel.id}`, 'DELETE', 204);
    await nextFor(testApp, 'StasisEnd', channel.id);
    assert.equal(fake.farEnds.size, 0);
  });

  test('an originate to FAKE/... reaches it, and frames cross a bridge both ways', async () => {
    // The outbound call: rings and is answered by the far end.
    const outbound = await ari(`/channels?endpoint=FAKE/bob&app=${APP}&channelId=fake-out`);
    assert.match(outbound.name, /^FAKE\/bob-/);
    const started = await nextFor(appEvents, 'StasisStart', 'fake-out');
    assert.equal(started.channel.state, 'Up');
    // The inbound call, put into the same application by the dialplan.
    const inbound = fake.incoming('1000', '5550000');
    await nextFor(testApp, 'StasisStart', inbound.id);
    await ari(`/channels/${inbound.id}/move?app=${APP}`, 'POST', 204);
    await nextFor(appEvents, 'StasisStart', inbound.id);

    const bridge = await ari('/bridges?type=mixing');
    await ari(`/bridges/${bridge.id}/addChannel?channel=fake-out,${inbound.id}`, 'POST', 204);
    const outEnd = fake.farEnds.get('fake-out')!;
    const inEnd = fake.farEnds.get(inbound.id)!;
    outEnd.sending = 1111;
    inEnd.sending = 2222;
    await waitUntil('audio crosses the bridge both ways', () => inEnd.received.includes(1111) && outEnd.received.includes(2222));

    // DTMF towards the far end goes through its driver.
    await ari(`/channels/fake-out/dtmf?dtmf=5&between=0`, 'POST', 204);
    await waitUntil('the digit reaches the far end', () => outEnd.digits.includes('5'));

    await ari(`/bridges/${bridge.id}`, 'DELETE', 204);
    await ari('/channels/fake-out', 'DELETE', 204);
    await ari(`/channels/${inbound.id}`, 'DELETE', 204);
    await waitUntil('both calls are gone', () => fake.farEnds.size === 0 && server.core.channels.size === 0);
    assert.equal(outEnd.hungUpWith, 16);
  });

  test('a module in use cannot be unloaded; unloaded, it is stopped and cannot be dialled', async () => {
    const held = fake.incoming('answer', '5559999');
    await ari('/asterisk/modules/chan_fake.so', 'DELETE', 409);
    held.hangup();
    await ari('/asterisk/modules/chan_fake.so', 'DELETE', 204);
    assert.equal(fake.stops, 1);
    assert.equal(fake.context, undefined);
    await ari(`/channels?endpoint=FAKE/bob&app=${APP}`, 'POST', 400);
    await ari('/asterisk/modules/chan_fake.so', 'POST', 204);
    assert.equal(fake.starts, 2);
  });

  test('stopping the server stops it, after the channels are gone', async () => {
    const other = new FakeTechnology();
    const second = await startTestServer({}, { technologies: [other] });
    other.incoming('answer', '5550001');
    await waitUntil('the call is up', () => second.core.channels.size === 1);
    await second.stop();
    assert.equal(other.stops, 1);
    assert.equal(second.core.channels.size, 0);
  });
});

describe('what a technology adds to the dialplan', () => {
  const SEAM_APP = 'seam-app';
  let dir: string;
  let seamServer: TestServer;
  let seamFake: FakeTechnology;
  let seamEvents: EventSocket;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'patchbay-fake-seam-'));
    const file = join(dir, 'extensions.conf');
    writeFileSync(
      file,
      [
        '[default]',
        'exten => seam,1,Set(FAKE_LABEL()=from-dialplan)',
        ' same => n,ChanIsAvail(FAKE/gone-1&FAKE/busy-2)',
        ' same => n,Set(SEEN=${FAKE_LABEL()}|${AVAILCHAN}|${AVAILSTATUS})',
        ' same => n,FakeNote(${AVAILCHAN})',
        ` same => n,Stasis(${SEAM_APP})`,
        '',
      ].join('\n'),
    );
    seamFake = new FakeTechnology();
    seamServer = await startTestServer({ dialplan: { file } }, { technologies: [seamFake] });
    seamEvents = await seamServer.events(`app=${SEAM_APP}`);
  });

  after(async () => {
    await seamEvents?.close();
    await seamServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function seamAri(path: string, method = 'GET', status = 200): Promise<Json> {
    const response = await seamServer.ari(path, { method });
    assert.equal(response.status, status, `${method} ${path}: ${await response.clone().text()}`);
    return status === 204 ? {} : ((await response.json()) as Json);
  }

  test('its function, application and device states are seen from the dialplan and ARI', async () => {
    const channel = seamFake.incoming('seam', '5552222');
    await nextFor(seamEvents, 'StasisStart', channel.id);
    const variable = async (name: string): Promise<unknown> => (await seamAri(`/channels/${channel.id}/variable?variable=${encodeURIComponent(name)}`)).value;
    // The function, written and read by the dialplan; the device states, through ChanIsAvail.
    assert.equal(await variable('SEEN'), 'from-dialplan|FAKE/busy-2|5&3');
    assert.deepEqual(seamFake.farEnds.get(channel.id)?.notes, ['FAKE/busy-2']);
    // The same function through ARI, and the driver's own CHANNEL() items.
    await seamAri(`/channels/${channel.id}/variable?variable=${encodeURIComponent('FAKE_LABEL()')}&value=from-ari`, 'POST', 204);
    assert.equal(await variable('FAKE_LABEL()'), 'from-ari');
    await seamAri(`/channels/${channel.id}/dtmf?dtmf=42&between=0`, 'POST', 204);
    await waitUntil('the digits reach the far end', () => seamFake.farEnds.get(channel.id)?.digits.join('') === '42');
    assert.equal(await variable('CHANNEL(fake,digits)'), '42');
    // Another technology's items are a failed read (ARI: 400).
    await seamAri(`/channels/${channel.id}/variable?variable=${encodeURIComponent('CHANNEL(other,digits)')}`, 'GET', 400);
    await seamAri(`/channels/${channel.id}`, 'DELETE', 204);
    await waitUntil('the call is gone', () => seamServer.core.channels.size === 0);
  });

  test('each server has its own registrations, gone while the technology is unloaded', async () => {
    // Two servers in this process each registered FAKE_LABEL; neither saw the other's.
    assert.ok(seamServer.core.functions.has('FAKE_LABEL') && server.core.functions.has('fake_label'));
    assert.ok(seamServer.core.pbx.application('fakenote'));
    await seamAri('/asterisk/modules/chan_fake.so', 'DELETE', 204);
    assert.equal(seamServer.core.functions.has('FAKE_LABEL'), false);
    assert.equal(seamServer.core.pbx.application('FakeNote'), undefined);
    assert.ok(server.core.functions.has('FAKE_LABEL'), 'the other server keeps its own');
    await seamAri('/asterisk/modules/chan_fake.so', 'POST', 204);
    assert.ok(seamServer.core.functions.has('FAKE_LABEL'));
    assert.ok(seamServer.core.pbx.application('FakeNote'));
  });
});
