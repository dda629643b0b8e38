// Hostile SDP bodies for the live sweep (live-sweep.test.ts): each builds an offer that is wrong in
// one way a peer could make it wrong — too much of something, a number out of range, a missing or
// garbled line, hostile security attributes — around an otherwise ordinary audio offer.

import { seededRandom } from '../../helpers/seeded-random.ts';

export type Random = () => number;

/** A seeded generator: the same seed gives the same sweep. */
export const seeded = (seed: number): Random => seededRandom(seed);

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)];

const HEAD = ['v=0', 'o=sweep 1 2 IN IP4 127.0.0.1', 's=-'];

function sdp(lines: readonly string[]): string {
  return [...lines, ''].join('\r\n');
}

/** An ordinary offer with `media` (m= line and its attributes) and connection line `c`. */
function offer(media: readonly string[], c: string | undefined = 'c=IN IP4 127.0.0.1'): string {
  return sdp([...HEAD, ...(c === undefined ? [] : [c]), 't=0 0', ...media]);
}

const audio = (port: number | string, profile = 'RTP/AVP', formats = '0 101'): string => `m=audio ${port} ${profile} ${formats}`;
const PCMU = ['a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16'];

/** `bytes` of base64 key material. */
function key(random: Random, bytes: number): string {
  const raw = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) raw[i] = Math.floor(random() * 256);
  return raw.toString('base64');
}

/**
 * The hostile offers by name. `budget` is the most bytes the body may take (a UDP datagram must
 * hold the whole request; over TCP more fits, up to the parser's message bound).
 */
export const HOSTILE_SDP: Record<string, (random: Random, budget: number) => string> = {
  'thousands of m-lines': (_random, budget) => {
    const lines: string[] = [];
    for (let i = 0; lines.join('\r\n').length < budget - 400; i++) lines.push(audio(4000 + 2 * (i % 30000), 'RTP/AVP', '0'));
    return offer(lines);
  },
  'thousands of codecs': (random, budget) => {
    const formats: number[] = [];
    while (formats.length * 4 < budget / 2) formats.push(Math.floor(random() * 128));
    const maps = formats.slice(0, Math.floor(budget / 80)).map((pt) => `a=rtpmap:${pt} X${pt}/8000`);
    return offer([audio(40000, 'RTP/AVP', formats.join(' ')), ...maps]);
  },
  'thousands of attributes': (_random, budget) => {
    const lines = [audio(40000), ...PCMU];
    for (let i = 0; lines.join('\r\n').length < budget - 300; i++) lines.push(`a=x-junk-${i}:${'v'.repeat(i % 40)}`);
    return offer(lines);
  },
  'port 0': () => offer([audio(0), ...PCMU]),
  'port 65536': () => offer([audio(65536), ...PCMU]),
  'port huge and negative': (random) => offer([audio(pick(random, ['99999999999999999999', '-1', '4000/99999', '1e9', '0x10'])), ...PCMU]),
  'no c= line': () => offer([audio(40000), ...PCMU], undefined),
  'c= IPv6 garbage': (random) => offer([audio(40000), ...PCMU], pick(random, ['c=IN IP6 ::::zz::1', 'c=IN IP6 [::1', 'c=IN IP6 ' + ':'.repeat(500), 'c=IN IP4 999.999.1.1', 'c=IN IP4 ', 'c=IN XX 1.2.3.4', 'c=IN IP4 127.0.0.1/999/999'])),
  'a=crypto bad keys': (random) =>
    offer([
      audio(40000, 'RTP/SAVP'),
      ...PCMU,
      pick(random, [
        'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:!!!not*base64!!!',
        `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key(random, 5)}`,
        `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key(random, 300)}`,
        'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:',
        'a=crypto:99999999999 AES_CM_128_HMAC_SHA1_80',
        'a=crypto:1 NO_SUCH_SUITE inline:' + key(random, 30),
        'a=crypto:',
      ]),
    ]),
  'a=crypto bad lifetimes and MKI': (random) =>
    offer([
      audio(40000, 'RTP/SAVP'),
      ...PCMU,
      `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key(random, 30)}|${pick(random, ['2^999', '2^-1', '0', '99999999999999999999999', 'x', '2^'])}|${pick(random, ['1:4', '99999:4', '1:0', '1:99', '0:', ':', 'a:b'])}`,
      `a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:${key(random, 30)}|1:${pick(random, ['4', '128', '-1'])};inline:${key(random, 30)}`,
    ]),
  'oversized fingerprint and ICE credentials': (random, budget) => {
    const size = Math.max(100, Math.floor(budget / 4));
    return offer([
      audio(40000, 'UDP/TLS/RTP/SAVPF'),
      ...PCMU,
      `a=fingerprint:${pick(random, ['sha-256', 'sha-1', 'md5', 'no-such-hash'])} ${'AB:'.repeat(size / 3)}AB`,
      `a=ice-ufrag:${'u'.repeat(size)}`,
      `a=ice-pwd:${'p'.repeat(size)}`,
      `a=setup:${pick(random, ['actpass', 'garbage', ''])}`,
      `a=candidate:1 1 UDP ${pick(random, ['2130706431', '99999999999999', '-5'])} ${pick(random, ['127.0.0.1', '::zz', 'x'.repeat(300)])} ${pick(random, ['40000', '70000', '-1'])} typ host`,
      'a=rtcp-mux',
    ]);
  },
  'rtpmap with clock 0': (random) =>
    offer([
      audio(40000, 'RTP/AVP', '0 96 101'),
      pick(random, ['a=rtpmap:0 PCMU/0', 'a=rtpmap:0 PCMU/-8000', 'a=rtpmap:0 PCMU/99999999999999999']),
      'a=rtpmap:96 opus/0/2',
      'a=rtpmap:101 telephone-event/0',
      'a=fmtp:96 maxplaybackrate=0;ptime=0;maxaveragebitrate=-1',
    ]),
  'ptime 0 or huge': (random) => offer([audio(40000), ...PCMU, `a=ptime:${pick(random, ['0', '4294967296', '-20', '1e9', 'x'])}`, `a=maxptime:${pick(random, ['0', '99999999999', ''])}`]),
  'telephone-event fmtp ranges': (random) => offer([audio(40000), 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', `a=fmtp:101 ${pick(random, ['0-4294967296', '99-1', '-', '16-', ',,,,', '0-15,' + '1-2,'.repeat(2000), '255-256'])}`]),
  'not SDP at all': (random) => {
    const bytes = Buffer.alloc(200 + Math.floor(random() * 800));
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
    return bytes.toString('latin1');
  },
  'SDP lines without values': () => sdp(['v=', 'o=', 's=', 'c=', 't=', 'm=', 'm=audio', 'm=audio x', 'a=', 'a=rtpmap:', 'a=rtpmap:x', 'b=AS:-1', 'b=TIAS:99999999999999999']),
  'bandwidth and direction garbage': (random) => offer([audio(40000), ...PCMU, `b=AS:${pick(random, ['-1', '99999999999999999999', 'x'])}`, 'a=sendonly', 'a=recvonly', 'a=inactive', 'a=sendrecv', `a=rtcp:${pick(random, ['0', '65536', 'x IN IP4 1.2.3.4'])}`]),
};
