// SRTP cost per packet and per call (DTLS-SRTP of browser calls): protect + unprotect of a 160-byte
// G.711 packet with each profile werift-rtp implements. Run: npx tsx bench/dtls-srtp.ts
import { randomBytes } from 'node:crypto';
import { createSrtpTransform } from '../src/media/srtp/dtls-srtp.ts';
for (const profile of [1, 7] as const) {
  const k = { a: randomBytes(16), b: randomBytes(16), sa: randomBytes(profile === 7 ? 12 : 14), sb: randomBytes(profile === 7 ? 12 : 14) };
  const tx = createSrtpTransform({ profile, localKey: k.a, localSalt: k.sa, remoteKey: k.b, remoteSalt: k.sb });
  const rx = createSrtpTransform({ profile, localKey: k.b, localSalt: k.sb, remoteKey: k.a, remoteSalt: k.sa });
  const n = 20000; const pkt = Buffer.alloc(172); pkt[0] = 0x80; pkt[1] = 0; pkt.writeUInt32BE(1234, 8);
  const t0 = performance.now(); let ok = 0;
  for (let i = 0; i < n; i++) { pkt.writeUInt16BE(i & 0xffff, 2); pkt.writeUInt32BE(i * 160, 4); const p = tx.protectRtp(pkt); if (rx.unprotectRtp(p)) ok++; }
  const us = ((performance.now() - t0) * 1000) / n;
  console.log(`profile ${profile}: ${us.toFixed(1)} us per packet protect+unprotect (${ok}/${n}); a call (50 pps each way): ${(us * 50 / 10000).toFixed(2)} % of a core`);
}
