// SDES-SRTP on SIP calls, checked on the wire by a raw UDP phone that speaks SRTP with its own
// SrtpSession: chan_pjsip's 488s (RTP/SAVP to an endpoint without media_encryption, plain RTP/AVP to
// one with media_encryption=sdes), the RTP/SAVP answer and its a=crypto, the tone the dialplan plays
// arriving encrypted (no plain PCMU of it on the wire) and decrypting with the answer's key,
// re-INVITEs keeping our key (and taking the phone's new one), optimistic endpoints, and the SIP
// trace masking every key; SRTP under a wrong key or replayed is dropped and counted in /metrics.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { ulawToLinear } from '../../src/media/g711.ts';
import { SrtpSession } from '../../src/media/srtp/session.ts';
import type { SrtpMasterKey, SrtpSuiteName } from '../../src/media/srtp/suites.ts';
import { parsePrometheus, sumOf } from '../helpers/prometheus.ts';
import { RawPhone } from './raw-phone.ts';
import { startSippServer, type SippServer } from './sipp-peer.ts';

/** A raw phone whose offers carry a=crypto (RTP/SAVP unless `profile` says otherwise) and that keeps whole RTP packets. */
class SdesPhone extends RawPhone {
  profile = 'RTP/SAVP';
  key: SrtpMasterKey = { suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: randomBytes(30) };
  withCrypto = true;
  readonly packets: Array<{ at: number; packet: Buffer }> = [];

  override async open(port = 0): Promise<void> {
    await super.open(port);
    this.rtp.on('message', (packet) => this.packets.push({ at: Date.now(), packet: Buffer.from(packet) }));
  }

  override sdp(direction = 'sendrecv', version = 1): string {
    const crypto = this.withCrypto ? [`a=crypto:1 ${this.key.suite} inline:${Buffer.from(this.key.keySalt).toString('base64')}`] : [];
    return super
      .sdp(direction, version)
      .replace(' RTP/AVP ', ` ${this.profile} `)
      .replace('a=ptime:20\r\n', ['a=ptime:20', ...crypto, ''].join('\r\n'));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` holds, at most 15 s; the assertion after it says what was missing. */
async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && !check(); ) await sleep(50);
}

/** The server's a=crypto in an SDP answer: its tag and key. */
function answeredKey(message: string): { tag: number; key: SrtpMasterKey } {
  const match = /^a=crypto:(\d+) (AES_CM_128_HMAC_SHA1_(?:80|32)) inline:([A-Za-z0-9+/]{40})\s*$/m.exec(message);
  assert.ok(match, `an a=crypto line in\n${message}`);
  return { tag: Number(match[1]), key: { suite: match[2] as SrtpSuiteName, keySalt: Buffer.from(match[3], 'base64') } };
}

/** Amplitude of 1 kHz in the μ-law payloads of `packets` read as plain RTP (what a listener without the key would hear). */
function plainToneAmplitude(packets: readonly Buffer[]): number {
  const samples = Int16Array.from(packets.flatMap((packet) => [...packet.subarray(12, 172)].map(ulawToLinear)));
  return samples.length === 0 ? 0 : Math.sqrt((2 * goertzelPower(samples, 1000, 8000)) / 1);
}

describe('SDES-SRTP calls (raw phone)', () => {
  let peer: SippServer;
  before(async () => {
    peer = await startSippServer(
      'srtp',
      '[srtp-in]\nexten => 100,1,Answer()\n same => n,PlayTones(1000)\n same => n,Wait(30)\n',
      {
        endpoint: {
          plain: { context: 'srtp-in', allow: 'ulaw' },
          secure: { context: 'srtp-in', allow: 'ulaw', media_encryption: 'sdes' },
          hopeful: { context: 'srtp-in', allow: 'ulaw', media_encryption: 'sdes', media_encryption_optimistic: 'yes' },
        },
      },
      'srtp-app',
    );
    peer.server.core.pjsip.sipTrace.enable('');
  });
  after(async () => {
    peer.server.core.pjsip.sipTrace.disable();
    await peer.close();
  });

  async function phone(user: string): Promise<SdesPhone> {
    const created = new SdesPhone(user);
    await created.open();
    created.serverPort = peer.server.core.pjsip.port;
    return created;
  }

  test('RTP/SAVP to an endpoint without media_encryption: 488', async () => {
    const caller = await phone('plain');
    try {
      const { final } = await caller.call('100');
      assert.match(final, /^SIP\/2\.0 488 /);
    } finally {
      caller.close();
    }
  });

  test('plain RTP/AVP to an endpoint with media_encryption=sdes: 488', async () => {
    const caller = await phone('secure');
    caller.profile = 'RTP/AVP';
    caller.withCrypto = false;
    try {
      const { final } = await caller.call('100');
      assert.match(final, /^SIP\/2\.0 488 /);
    } finally {
      caller.close();
    }
  });

  test('media_encryption=sdes: RTP/SAVP answered with a=crypto; the tone arrives encrypted and decrypts; re-INVITEs keep our key', async () => {
    const caller = await phone('secure');
    const traceStart = peer.server.logLines.length;
    try {
      const { dialog, final } = await caller.call('100');
      assert.match(final, /^SIP\/2\.0 200 /);
      assert.match(final, /^m=audio \d+ RTP\/SAVP 0 101\r?$/m);
      const ours = answeredKey(final);
      assert.equal(ours.tag, 1);
      assert.equal(ours.key.suite, 'AES_CM_128_HMAC_SHA1_80');
      const session = new SrtpSession(caller.key, ours.key);
      // About 75 packets in 1.5 s on an idle machine; a loaded one sends them later, not fewer.
      await until(() => caller.packets.length > 40);
      const sealed = caller.packets.map(({ packet }) => Buffer.from(packet));
      assert.ok(sealed.length > 40, `${sealed.length} packets from the server`);
      assert.ok(sealed.every((packet) => packet.length === 172 + 10 || packet[1] >= 200), 'SRTP packets of 160 bytes of audio and an 80-bit tag');
      const audio = sealed.filter((packet) => packet.length === 182);
      const plainAmplitude = plainToneAmplitude(audio);
      const opened = audio.map((packet) => {
        const length = session.unprotectRtp(packet, packet.length);
        assert.equal(length, 172, 'every packet authenticates with the key of the answer');
        return packet.subarray(0, 172);
      });
      const toneAmplitude = plainToneAmplitude(opened.slice(5));
      assert.ok(toneAmplitude > 2000, `1 kHz at ${toneAmplitude.toFixed(0)} once decrypted`);
      assert.ok(plainAmplitude < toneAmplitude / 10, `read as plain RTP the wire holds no tone (${plainAmplitude.toFixed(0)} vs ${toneAmplitude.toFixed(0)})`);

      // The phone's SRTP reaches the call; a stranger's (another key) and a replay are dropped and counted.
      const serverRtpPort = Number(/^m=audio (\d+) /m.exec(final)?.[1]);
      const refused = async () => sumOf(parsePrometheus(await (await fetch(`${peer.server.url}/metrics`)).text()), 'patchbay_sip_srtp_refused_packets_total');
      const refusedBefore = await refused();
      const forger = new SrtpSession({ suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: randomBytes(30) }, ours.key);
      const phoneSide = new SrtpSession(caller.key, ours.key);
      let replay: Buffer | undefined;
      for (let i = 0; i < 20; i++) {
        const packet = Buffer.alloc(172 + 32, 0xff);
        packet.set([0x80, 0, 0, i, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78]);
        const sealed = Buffer.from(packet.subarray(0, phoneSide.protectRtp(packet, 172)));
        caller.rtp.send(sealed, serverRtpPort, '127.0.0.1');
        if (i === 10) replay = sealed;
        if (i < 5) {
          const forged = Buffer.alloc(172 + 32, 0xff);
          forged.set([0x80, 0, 0, 100 + i, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78]);
          caller.rtp.send(forged.subarray(0, forger.protectRtp(forged, 172)), serverRtpPort, '127.0.0.1');
        }
        await sleep(20);
      }
      caller.rtp.send(replay!, serverRtpPort, '127.0.0.1');
      const deadline = Date.now() + 5000;
      while ((await refused()) - refusedBefore < 6 && Date.now() < deadline) await sleep(50);
      assert.equal((await refused()) - refusedBefore, 6, 'five forged packets and one replay counted');

      // A re-INVITE with the same key: the same answer key, the stream goes on (same ROC and index).
      const again = await caller.reinvite(dialog, 'sendrecv');
      assert.match(again, /^SIP\/2\.0 200 /);
      assert.deepEqual(answeredKey(again), ours, 'our key is kept');
      // The phone re-keys: our key still stays (chan_pjsip keeps its own key), and media still decrypts with it.
      caller.key = { suite: 'AES_CM_128_HMAC_SHA1_32', keySalt: randomBytes(30) };
      const rekeyed = await caller.reinvite(dialog, 'sendrecv');
      assert.match(rekeyed, /^SIP\/2\.0 200 /);
      const third = answeredKey(rekeyed);
      assert.equal(third.key.suite, 'AES_CM_128_HMAC_SHA1_32', 'the suite of the new offer');
      const from = caller.packets.length;
      const rtpSince = (): Buffer[] => caller.packets.slice(from).map(({ packet }) => packet).filter((packet) => packet[1] < 200);
      await until(() => rtpSince().length > 10);
      const later = rtpSince();
      assert.ok(later.length > 10);
      const receiver = new SrtpSession(caller.key, third.key);
      assert.ok(later.every((packet) => receiver.unprotectRtp(packet, packet.length) === 172), 'packets after the re-key decrypt with the 32-bit suite key');

      // The trace had every INVITE and answer, with the keys masked.
      const traced = peer.server.logLines.slice(traceStart).filter((line) => line.includes('SIP '));
      assert.ok(traced.some((line) => line.includes('a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:[masked]')), 'the trace shows the crypto line');
      for (const key of [ours.key, third.key, caller.key]) {
        assert.ok(!peer.server.logLines.some((line) => line.includes(Buffer.from(key.keySalt).toString('base64').slice(0, 24))), 'no key in the log');
      }
      assert.match(await caller.request(dialog, 'BYE'), /^SIP\/2\.0 200 /);
    } finally {
      caller.close();
    }
  });

  test('optimistic: plain offers are answered in the clear, RTP/AVP with crypto gets SRTP', async () => {
    const plain = await phone('hopeful');
    plain.profile = 'RTP/AVP';
    plain.withCrypto = false;
    const hopeful = await phone('hopeful');
    hopeful.profile = 'RTP/AVP';
    try {
      const first = await plain.call('100');
      assert.match(first.final, /^SIP\/2\.0 200 /);
      assert.match(first.final, /^m=audio \d+ RTP\/AVP /m);
      assert.doesNotMatch(first.final, /a=crypto/);
      const second = await hopeful.call('100');
      assert.match(second.final, /^SIP\/2\.0 200 /);
      assert.match(second.final, /^m=audio \d+ RTP\/AVP /m, 'the offer\'s profile');
      answeredKey(second.final);
      await plain.request(first.dialog, 'BYE');
      await hopeful.request(second.dialog, 'BYE');
    } finally {
      plain.close();
      hopeful.close();
    }
  });
});
