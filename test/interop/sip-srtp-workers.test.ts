// SDES-SRTP re-keying through a whole server with the call's stream in a media worker
// (media.workers: 1, issue 25), checked on the wire by a raw UDP phone with its own SrtpSession:
// the tone the dialplan plays arrives encrypted under our answer's key; a re-INVITE repeating the
// phone's key keeps ours and the stream goes on (same ROC and index); a re-INVITE with a new phone
// key (another suite) gets our key of that suite, and the worker's sending direction restarts with
// it while the phone's new key is taken and its old one refused — the same rules as on the main
// thread (test/interop/sip-srtp.test.ts). The stream is counted on the worker in /metrics.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SrtpSession } from '../../src/media/srtp/session.ts';
import type { SrtpMasterKey, SrtpSuiteName } from '../../src/media/srtp/suites.ts';
import { parsePrometheus, sumOf } from '../helpers/prometheus.ts';
import { startTestServer } from '../helpers/server.ts';
import { RawPhone } from './raw-phone.ts';
import { waitFor } from './sipp-peer.ts';
import { waitForWorkers } from './sipp-worker-calls.ts';

const AUTH = { authorization: `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}` };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class SdesPhone extends RawPhone {
  key: SrtpMasterKey = { suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: randomBytes(30) };
  readonly packets: Buffer[] = [];

  override async open(port = 0): Promise<void> {
    await super.open(port);
    this.rtp.on('message', (packet) => {
      this.received.length = 0;
      if (packet[1]! < 200) this.packets.push(Buffer.from(packet));
    });
  }

  override sdp(direction = 'sendrecv', version = 1): string {
    const crypto = `a=crypto:1 ${this.key.suite} inline:${Buffer.from(this.key.keySalt).toString('base64')}`;
    return super.sdp(direction, version).replace(' RTP/AVP ', ' RTP/SAVP ').replace('a=ptime:20\r\n', `a=ptime:20\r\n${crypto}\r\n`);
  }
}

function answeredKey(message: string): SrtpMasterKey {
  const match = /^a=crypto:\d+ (AES_CM_128_HMAC_SHA1_(?:80|32)) inline:([A-Za-z0-9+/]{40})\s*$/m.exec(message);
  assert.ok(match, `an a=crypto line in\n${message}`);
  return { suite: match[1] as SrtpSuiteName, keySalt: Buffer.from(match[2]!, 'base64') };
}

/** How many of `packets` authenticate under `session` (each checked on a copy). */
function authentic(session: SrtpSession, packets: readonly Buffer[]): number {
  return packets.filter((packet) => session.unprotectRtp(Buffer.from(packet), packet.length) > 0).length;
}

test('SDES-SRTP in a media worker through re-INVITEs: the same keys go on, a new key restarts its direction, as on the main thread', { timeout: 120_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'patchbay-srtp-rekey-worker-'));
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, '[srtp-in]\nexten => 100,1,Answer()\n same => n,PlayTones(1000)\n same => n,Wait(60)\n');
  const server = await startTestServer({
    media: { workers: 1 },
    dialplan: { file: dialplanFile },
    config_objects: { res_pjsip: { endpoint: { secure: { context: 'srtp-in', allow: 'ulaw', media_encryption: 'sdes' } } } },
  } as never);
  const phone = new SdesPhone('secure');
  const metrics = async () => parsePrometheus(await (await fetch(`${server.url}/metrics`, { headers: AUTH })).text());
  try {
    const pool = server.core.pjsip.mediaWorkers;
    assert.ok(pool);
    await waitForWorkers(server);
    await phone.open();
    phone.serverPort = server.core.pjsip.port;
    const { dialog, final } = await phone.call('100');
    assert.match(final, /^SIP\/2\.0 200 /);
    const ours = answeredKey(final);
    const serverRtpPort = Number(/^m=audio (\d+) /m.exec(final)?.[1]);
    await waitFor('the stream counted on the worker', async () => (sumOf(await metrics(), 'patchbay_media_worker_streams') === 1 ? true : undefined), 20_000);
    await waitFor('the tone', () => (phone.packets.length >= 30 ? true : undefined), 20_000);
    assert.equal(authentic(new SrtpSession(phone.key, ours), phone.packets), phone.packets.length, 'every packet under our answer\'s key');

    // The phone talks under its key; a replay is refused (counted through the worker's figures).
    const refused = async () => sumOf(await metrics(), 'patchbay_sip_srtp_refused_packets_total');
    const talk = (key: SrtpMasterKey, from: number, count: number): Buffer[] => {
      const session = new SrtpSession(key, ours);
      const sent: Buffer[] = [];
      for (let i = 0; i < count; i++) {
        const packet = Buffer.alloc(172 + 32, 0xff);
        packet.set([0x80, 0, (from + i) >> 8, (from + i) & 0xff, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78]);
        const sealed = Buffer.from(packet.subarray(0, session.protectRtp(packet, 172)));
        phone.rtp.send(sealed, serverRtpPort, '127.0.0.1');
        sent.push(sealed);
      }
      return sent;
    };
    const before = await refused();
    const first = talk(phone.key, 1, 10);
    await sleep(300);
    phone.rtp.send(first[5]!, serverRtpPort, '127.0.0.1');
    await waitFor('the replay refused', async () => ((await refused()) - before === 1 ? true : undefined), 10_000);

    // The same keys again: our key kept; the phone's receiving state kept (the replay is still one).
    const again = await phone.reinvite(dialog, 'sendrecv');
    assert.match(again, /^SIP\/2\.0 200 /);
    assert.deepEqual(answeredKey(again), ours, 'our key is kept');
    await sleep(300);
    phone.rtp.send(first[6]!, serverRtpPort, '127.0.0.1');
    await waitFor('the replay after the same keys refused', async () => ((await refused()) - before === 2 ? true : undefined), 10_000);
    const from = phone.packets.length;
    // Ten packets take 200 ms on an idle machine; a loaded one sends them later: counted, not timed.
    await waitFor('ten packets after the re-INVITE', () => (phone.packets.length - from >= 12 ? true : undefined), 15_000);
    assert.ok(authentic(new SrtpSession(phone.key, ours), phone.packets.slice(from)) >= 10, 'our packets still authenticate (same ROC and index)');

    // A new phone key of the other suite: our key of that suite answers, the worker sends under it.
    const oldKey = phone.key;
    phone.key = { suite: 'AES_CM_128_HMAC_SHA1_32', keySalt: randomBytes(30) };
    const rekeyed = await phone.reinvite(dialog, 'sendrecv');
    assert.match(rekeyed, /^SIP\/2\.0 200 /);
    const third = answeredKey(rekeyed);
    assert.equal(third.suite, 'AES_CM_128_HMAC_SHA1_32');
    // The worker seals under the new key once it has the answer's: from its first packet under it
    // (a loaded machine took longer than the 400 ms this once slept), every packet is.
    const rekeyedAt = phone.packets.length;
    const underNewKey = (packet: Buffer): boolean => authentic(new SrtpSession(phone.key, third), [packet]) === 1;
    const later = await waitFor('a packet under the new key', () => {
      const index = phone.packets.findIndex((packet, at) => at >= rekeyedAt && underNewKey(packet));
      return index >= 0 ? index : undefined;
    }, 15_000);
    await waitFor('ten packets after the re-key', () => (phone.packets.length - later >= 10 ? true : undefined), 15_000);
    const after = phone.packets.slice(later);
    assert.ok(after.length >= 10);
    assert.equal(authentic(new SrtpSession(phone.key, third), after), after.length, 'packets after the re-key authenticate under our new key');
    // The phone's old key no longer authenticates; its new one does (nothing more refused).
    const refusedBefore = await refused();
    talk(oldKey, 100, 3);
    await waitFor('the old key refused', async () => ((await refused()) - refusedBefore === 3 ? true : undefined), 10_000);
    const session = new SrtpSession(phone.key, third);
    for (let i = 0; i < 10; i++) {
      const packet = Buffer.alloc(172 + 32, 0xff);
      packet.set([0x80, 0, 0, 200 + i, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x79]);
      phone.rtp.send(packet.subarray(0, session.protectRtp(packet, 172)), serverRtpPort, '127.0.0.1');
    }
    await sleep(500);
    assert.equal((await refused()) - refusedBefore, 3, 'the new key\'s packets taken');
    assert.ok(!server.logLines.some((line) => line.includes(Buffer.from(ours.keySalt).toString('base64').slice(0, 24))), 'no key in the log');
    assert.match(await phone.request(dialog, 'BYE'), /^SIP\/2\.0 200 /);
  } finally {
    phone.close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
});
