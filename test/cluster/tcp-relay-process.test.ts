// A real softphone over TCP through member A, called from member B (docs/cluster.md,
// "Registrations"): baresip registers over TCP with member A, which runs in a process of its own;
// B originates PJSIP/alice and the call runs over A's connection. Audio both ways between baresip
// and B directly: B plays 600 Hz (PlayTones) and records what it hears, baresip sends 1000 Hz and
// dumps what it hears; each hears the other's tone. baresip hangs up (its BYE crosses A to B).
// Then A is killed with SIGKILL mid-call: once B declares it dead, B's call ends (cause 27) and B
// holds no relayed dialog.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readWavFile } from '../../src/media/wav-reader.ts';
import { BARESIP_MODULES, ctrl, HAVE_BARESIP, showBaresipOutput, stopBaresip, writeBaresipHome } from '../helpers/baresip.ts';
import { natsServerInstalled, startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { tonePower } from '../helpers/tone-power.ts';
import { clusterStatus as status, dialplanDir, type Json, memberSettings, nextChannelEvent, startMemberProcess, until } from './cluster-fixture.ts';

const FAILURE_SECONDS = 3;
const DIALPLAN = `[phones]
exten => tones,1,Answer()
 same => n,PlayTones(600)
 same => n,Record(relay-heard.wav,0,4,k)
 same => n,Wait(60)
exten => park,1,Answer()
 same => n,Wait(120)
`;
const skip = !natsServerInstalled()
  ? 'nats-server is not installed (apt-get install nats-server)'
  : !HAVE_BARESIP
    ? 'baresip is not installed (Debian package baresip)'
    : !existsSync(join(BARESIP_MODULES, 'sndfile.so'))
      ? 'baresip has no sndfile module'
      : false;

describe('baresip over TCP through member A (a process of its own), called from member B', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let nodeA: ChildProcess;
  let urlA: string;
  let sipPortA: number;
  let b: TestServer;
  let events: EventSocket;
  let baresip: ChildProcess | undefined;
  let output = '';
  let ctrlPort: number;
  const dumps = (): string => join(dir, 'dumps');
  const channelOnB = async (id: string): Promise<Json | undefined> => {
    const response = await b.ari(`/channels/${id}`);
    return response.status === 200 ? ((await response.json()) as Json) : undefined;
  };
  const nextEvent = (type: string, channelId: string, timeoutMs = 30_000): Promise<Json> => nextChannelEvent(events, type, channelId, timeoutMs);

  before(async () => {
    dir = dialplanDir('patchbay-cluster-tcp-relay-process-', DIALPLAN);
    mkdirSync(dumps());
    nats = await startNatsServer();
    // A's SIP port is chosen here (UDP and TCP on it) so that baresip can be pointed at it.
    sipPortA = (await freeSipPhonePort()) + 1;
    const settings = (node: string, serverId: string, extra: Json = {}): Json => ({
      ...memberSettings(nats.url, dir, node, serverId, { failure_seconds: FAILURE_SECONDS }),
      config_objects: {
        res_pjsip: {
          endpoint: { alice: { context: 'phones', allow: 'ulaw', aors: 'alice' } },
          aor: { alice: { max_contacts: 1, remove_existing: 'yes' } },
        },
      },
      ...extra,
    });
    ({ child: nodeA, url: urlA } = await startMemberProcess(settings('nodeA', '02:00:00:00:3a:01', { sip: { port: sipPortA } })));
    b = await startTestServer(settings('nodeB', '02:00:00:00:3b:01'));
    events = await b.events('app=relay-process');
    await until('the members know each other', async () => (await status(urlA)).members.length === 2 && (await status(b.url)).members.length === 2);

    const phonePort = await freeSipPhonePort();
    ctrlPort = await freePort();
    const home = writeBaresipHome(dir, { phone: phonePort, ctrl: ctrlPort }, ['module sndfile.so', `snd_path ${dumps()}`]);
    const config = join(home, 'config');
    writeFileSync(config, readFileSync(config, 'utf8').replace(/^audio_source .*$/m, 'audio_source ausine,1000'));
    writeFileSync(join(home, 'accounts'), `<sip:alice@127.0.0.1:${sipPortA};transport=tcp>;audio_codecs=PCMU/8000/1;regint=60;answermode=auto\n`);
    baresip = spawn('baresip', ['-f', home], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    baresip.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    baresip.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await until('B knows the TCP contact baresip registered on A', async () => (await status(b.url)).contacts.known_elsewhere === 1, 30_000);
  });

  after(async () => {
    await stopBaresip(baresip);
    if (nodeA && nodeA.exitCode === null && nodeA.signalCode === null) nodeA.kill('SIGKILL');
    await events?.close();
    await b?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("B's call reaches baresip over A's connection, with audio both ways between baresip and B; baresip hangs up", async () => {
    try {
      await callWithAudio();
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    }
  });

  async function callWithAudio(): Promise<void> {
    const created = await b.ari('/channels?endpoint=PJSIP/alice&extension=tones&context=phones&channelId=relay-audio', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    await until('the call is up on B', async () => (await channelOnB('relay-audio'))?.state === 'Up', 20_000);
    // Record(…,4) ends after 4 s of what B heard; then baresip hangs up.
    await until('B recorded what it heard', async () => (await b.ari('/recordings/stored/relay-heard')).status === 200, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await ctrl(ctrlPort, 'hangup', '');
    await until('the call ended on B (baresip\'s BYE through A)', async () => (await channelOnB('relay-audio')) === undefined, 20_000);
    const recorded = Buffer.from(await (await b.ari('/recordings/stored/relay-heard/file')).arrayBuffer());
    const recordedFile = join(dir, 'heard-on-b.wav');
    writeFileSync(recordedFile, recorded);
    const onB = readWavFile(recordedFile);
    const [bHears1000, bHears600] = [tonePower(onB.samples, 1000, onB.rate), tonePower(onB.samples, 600, onB.rate)];
    assert.ok(bHears1000 > 20 * Math.max(bHears600, 1), `B hears baresip's 1000 Hz: ${bHears1000} against 600 Hz ${bHears600}`);
    await until('baresip dumped what it heard', () => readdirSync(dumps()).some((name) => name.endsWith('-dec.wav')));
    const dump = readdirSync(dumps()).find((name) => name.endsWith('-dec.wav'))!;
    const onPhone = readWavFile(join(dumps(), dump));
    const [phoneHears600, phoneHears1000] = [tonePower(onPhone.samples, 600, onPhone.rate), tonePower(onPhone.samples, 1000, onPhone.rate)];
    assert.ok(phoneHears600 > 20 * Math.max(phoneHears1000, 1), `baresip hears B's 600 Hz: ${phoneHears600} against 1000 Hz ${phoneHears1000}`);
    await until('no relayed dialog left on B', async () => (await status(b.url)).relayed_dialogs.through_others === 0);
  }

  it("A killed mid-call: B's call over A's connection ends once A is declared dead", async () => {
    const created = await b.ari('/channels?endpoint=PJSIP/alice&app=relay-process&channelId=relay-kill', { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    await nextEvent('StasisStart', 'relay-kill');
    assert.equal((await status(b.url)).relayed_dialogs.through_others, 1);
    nodeA.kill('SIGKILL');
    const destroyed = await nextEvent('ChannelDestroyed', 'relay-kill', 30_000);
    assert.equal(destroyed.cause, 27, JSON.stringify(destroyed));
    assert.equal((await status(b.url)).relayed_dialogs.through_others, 0);
  });
});
