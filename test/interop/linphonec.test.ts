// Desk-phone behaviour against a real softphone, linphonec (liblinphone 5, Debian's linphone-cli):
// three linphonecs register with digest credentials; one hears its own tone back through Echo();
// ARI originates to another, which answers by itself, and records its tone; and the two transfers
// desk phones make — attended (REFER with Replaces naming the phone's second call) and blind —
// leave the two other phones talking to each other, each hearing the other's tone. Audio goes in
// and out of linphonec as WAV files ("soundcard use files"). Skipped when linphonec or sox is
// missing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { HAVE_LINPHONEC, LinphonePhone } from '../helpers/linphone.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { tonePower } from '../helpers/tone-power.ts';

const HAVE_SOX = spawnSync('sox', ['--version']).error === undefined;
const skip = !HAVE_LINPHONEC ? 'linphonec is not installed (Debian: linphone-cli)' : !HAVE_SOX ? 'sox is not installed' : false;
const APP = 'linphone-app';
const TONES = { alice: 600, bob: 1000, carol: 1400 } as const;

let work: string;
let server: TestServer;
let events: EventSocket;
const phones = new Map<keyof typeof TONES, LinphonePhone>();

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The samples of a WAV linphonec wrote (its header may still say 0 bytes while it writes). */
function heardSamples(path: string): { samples: Int16Array; rate: number } {
  const bytes = readFileSync(path);
  const data = bytes.indexOf('data');
  assert.ok(data > 0, `${path} is a WAV (${bytes.length} bytes)`);
  const rate = bytes.readUInt32LE(24);
  const start = data + 8;
  const count = Math.floor((bytes.length - start) / 2);
  const samples = new Int16Array(count);
  for (let index = 0; index < count; index++) samples[index] = bytes.readInt16LE(start + index * 2);
  return { samples, rate };
}

/** The tone's power in the last `seconds` of what a phone recorded, against a frequency nobody sends. */
function toneInTail(path: string, hz: number, seconds: number): { tone: number; other: number } {
  const { samples, rate } = heardSamples(path);
  const tail = samples.subarray(Math.max(0, samples.length - Math.round(seconds * rate)));
  return { tone: tonePower(tail, hz, rate), other: tonePower(tail, 2300, rate) };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

type AriEvent = Record<string, any>;

/** Reads events until one matches. */
async function waitEvent(match: (event: AriEvent) => boolean, timeoutMs: number): Promise<AriEvent> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as AriEvent;
    if (match(event)) return event;
  }
}

/** Waits until linphonec has written a recording out (it closes the file a moment after the call ends). */
async function written(path: string): Promise<void> {
  await until(`${path} written`, async () => {
    try {
      const bytes = readFileSync(path);
      return bytes.indexOf('data') > 0 && bytes.length > 8000 ? true : undefined;
    } catch {
      return undefined;
    }
  });
}

async function channelNames(): Promise<string[]> {
  const list = (await (await server.ari('/channels')).json()) as Array<{ name: string }>;
  return list.map((channel) => channel.name).sort();
}

describe('linphonec as desk phones', { skip }, () => {
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-linphone-'));
    for (const [user, hz] of Object.entries(TONES)) {
      const made = spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', join(work, `${user}.wav`), 'synth', '60', 'sine', String(hz), 'vol', '0.4']);
      assert.equal(made.status, 0, String(made.stderr));
    }
    const dialplan = join(work, 'extensions.conf');
    writeFileSync(
      dialplan,
      ['[phones]', 'exten => echo,1,Answer()', ' same => n,Echo()', 'exten => 200,1,Dial(PJSIP/bob,30)', 'exten => 300,1,Dial(PJSIP/carol,30)', ''].join('\n'),
    );
    const endpoint = (user: string) => ({ context: 'phones', allow: 'ulaw', auth: `${user}-auth`, aors: user });
    const auth = (user: string) => ({ auth_type: 'userpass', username: user, password: `${user}-secret` });
    server = await startTestServer({
      dialplan: { file: dialplan },
      config_objects: {
        res_pjsip: {
          endpoint: { alice: endpoint('alice'), bob: endpoint('bob'), carol: endpoint('carol') },
          auth: { 'alice-auth': auth('alice'), 'bob-auth': auth('bob'), 'carol-auth': auth('carol') },
          aor: { alice: { max_contacts: 1 }, bob: { max_contacts: 1 }, carol: { max_contacts: 1 } },
        },
      },
    } as never);
    events = await server.events(`app=${APP}`);
    const serverPort = server.core.pjsip.port;
    for (const user of Object.keys(TONES) as Array<keyof typeof TONES>) {
      const phone = new LinphonePhone({ user, password: `${user}-secret`, serverPort, autoAnswer: user !== 'alice' }, work);
      phones.set(user, phone);
      await phone.start();
      phone.play(join(work, `${user}.wav`));
    }
  });

  after(async () => {
    for (const phone of phones.values()) await phone.stop();
    await events?.close();
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const phone = (user: keyof typeof TONES): LinphonePhone => phones.get(user)!;

  afterEach(async () => {
    // A failed test must not leave its calls to the next one.
    for (const each of phones.values()) each.command('terminate all');
    await until('no channel left', async () => ((await channelNames()).length === 0 ? true : undefined)).catch(() => undefined);
  });
  const uri = (user: string): string => `sip:${user}@127.0.0.1:${server.core.pjsip.port}`;

  test('each registers with digest authentication: the endpoint is online', { timeout: 60_000 }, async () => {
    for (const user of Object.keys(TONES)) {
      await until(`${user} online`, async () => {
        const endpoint = (await (await server.ari(`/endpoints/PJSIP/${user}`)).json()) as { state: string };
        return endpoint.state === 'online' ? true : undefined;
      });
    }
  });

  test('a call to Echo(): linphonec hears its own tone back through Patchbay', { timeout: 60_000 }, async () => {
    const alice = phone('alice');
    const heard = join(work, 'alice-echo.wav');
    alice.record(heard);
    const mark = alice.mark();
    alice.command(`call ${uri('echo')}`);
    await alice.waitFor(/Call (\d+) with \S+ connected/, 20_000, mark);
    await sleep(3000);
    alice.command('terminate');
    await alice.waitFor(/ended/, 10_000, mark);
    await written(heard);
    const { tone, other } = toneInTail(heard, TONES.alice, 2);
    assert.ok(tone > 50 * Math.max(other, 1e-9), `600 Hz came back: ${tone} against ${other} at 2300 Hz`);
  });

  test('ARI originates to PJSIP/bob: linphonec answers by itself and the app records its tone', { timeout: 60_000 }, async () => {
    const originated = await server.ari(`/channels?endpoint=PJSIP/bob&app=${APP}`, { method: 'POST' });
    assert.equal(originated.status, 200);
    const { id } = (await originated.json()) as { id: string };
    await waitEvent((event) => event.type === 'StasisStart' && event.channel?.id === id, 20_000);
    const state = (await (await server.ari(`/channels/${id}`)).json()) as { state: string };
    assert.equal(state.state, 'Up');
    const record = await server.ari(`/channels/${id}/record?name=linphone-bob&format=wav&maxDurationSeconds=2&ifExists=overwrite`, { method: 'POST' });
    assert.equal(record.status, 201);
    await waitEvent((event) => event.type === 'RecordingFinished' && event.recording?.name === 'linphone-bob', 20_000);
    const file = Buffer.from(await (await server.ari('/recordings/stored/linphone-bob/file')).arrayBuffer());
    writeFileSync(join(work, 'bob-recorded.wav'), file);
    const { tone, other } = toneInTail(join(work, 'bob-recorded.wav'), TONES.bob, 1.5);
    assert.ok(tone > 50 * Math.max(other, 1e-9), `bob's 1 kHz reached the recording: ${tone} against ${other}`);
    assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    await waitEvent((event) => event.type === 'ChannelDestroyed' && event.channel?.id === id, 20_000);
  });

  test('attended transfer from a desk phone: alice calls bob, then carol, transfers one to the other — bob and carol talk', { timeout: 90_000 }, async () => {
    const [alice, carol] = [phone('alice'), phone('carol')];
    const heard = join(work, 'carol-attended.wav');
    carol.record(heard);
    const carolMark = carol.mark();
    const mark = alice.mark();
    alice.command(`call ${uri('200')}`);
    const first = (await alice.waitFor(/Call (\d+) with \S+ connected/, 20_000, mark))[1];
    // A desk phone holds its first call before it makes the second.
    const held = alice.mark();
    alice.command(`pause ${first}`);
    await alice.waitFor(new RegExp(`Call ${first} with \\S+ (?:is now )?paused`), 20_000, held);
    const second = alice.mark();
    alice.command(`call ${uri('300')}`);
    const other = (await alice.waitFor(/Call (\d+) with \S+ connected/, 20_000, second))[1];
    assert.notEqual(first, other);
    await until('two calls of two legs each', async () => ((await channelNames()).length === 4 ? true : undefined));
    alice.command(`transfer ${first} --to-call ${other}`);
    // alice's two calls end; bob's and carol's channels stay, bridged to each other.
    const names = await until('bob and carol left alone', async () => {
      const now = await channelNames();
      return now.length === 2 && !now.some((name) => name.startsWith('PJSIP/alice-')) ? now : undefined;
    });
    assert.match(names[0], /^PJSIP\/bob-/);
    assert.match(names[1], /^PJSIP\/carol-/);
    await sleep(3000);
    // linphonec completes its recording when the call ends.
    phone('bob').command('terminate all');
    await until('no channel left', async () => ((await channelNames()).length === 0 ? true : undefined));
    await carol.waitFor(/ended/, 10_000, carolMark);
    await written(heard);
    const { tone, other: quiet } = toneInTail(heard, TONES.bob, 2);
    assert.ok(tone > 50 * Math.max(quiet, 1e-9), `carol hears bob after the transfer: ${tone} against ${quiet}`);
  });

  test('blind transfer from a desk phone: alice calls bob and transfers him to 300 — bob and carol talk', { timeout: 90_000 }, async () => {
    const [alice, carol] = [phone('alice'), phone('carol')];
    const heard = join(work, 'carol-blind.wav');
    carol.record(heard);
    const carolMark = carol.mark();
    const mark = alice.mark();
    alice.command(`call ${uri('200')}`);
    await alice.waitFor(/Call (\d+) with \S+ connected/, 20_000, mark);
    await until('alice and bob up', async () => ((await channelNames()).length === 2 ? true : undefined));
    alice.command(`transfer ${uri('300')}`);
    const names = await until('bob and carol talking', async () => {
      const now = await channelNames();
      return now.length === 2 && now.some((name) => name.startsWith('PJSIP/carol-')) && !now.some((name) => name.startsWith('PJSIP/alice-')) ? now : undefined;
    });
    assert.match(names[0], /^PJSIP\/bob-/);
    await sleep(3000);
    phone('carol').command('terminate all');
    await until('no channel left', async () => ((await channelNames()).length === 0 ? true : undefined));
    await carol.waitFor(/ended/, 10_000, carolMark);
    await written(heard);
    const { tone, other } = toneInTail(heard, TONES.bob, 2);
    assert.ok(tone > 50 * Math.max(other, 1e-9), `carol hears bob after the blind transfer: ${tone} against ${other}`);
  });
});
