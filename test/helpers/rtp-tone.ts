// A media end of a test call that the test owns: a UDP socket that sends a PCMU sine tone as RTP
// (20 ms packets, payload type 0) and keeps what it receives with its arrival time, so a test can
// tell which frequency reached it and when. SIPp scenarios write this socket's port in their SDP
// (`-set mport <port>`): signalling is SIPp's, media is checked sample by sample here.
import dgram from 'node:dgram';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { linearToUlaw, ulawToLinear } from '../../src/media/g711.ts';

export interface ReceivedPacket {
  readonly at: number;
  readonly payloadType: number;
  readonly payload: Buffer;
}

export class RtpToneEnd {
  readonly socket = dgram.createSocket('udp4');
  readonly received: ReceivedPacket[] = [];
  #timer: NodeJS.Timeout | undefined;
  #sequence = Math.floor(Math.random() * 0xffff);
  #timestamp = Math.floor(Math.random() * 0xffffffff);
  readonly #ssrc = Math.floor(Math.random() * 0xffffffff);
  #phase = 0;

  async open(address = '127.0.0.1'): Promise<this> {
    await new Promise<void>((resolve) => this.socket.bind(0, address, resolve));
    this.socket.on('message', (packet) => {
      if (packet.length < 12 || packet[0] >> 6 !== 2) return;
      const payloadType = packet[1] & 0x7f;
      // RTCP (200–204 in the second byte) shares the port when multiplexed: not audio.
      if (packet[1] >= 200 && packet[1] <= 204) return;
      const csrcs = packet[0] & 0x0f;
      this.received.push({ at: Date.now(), payloadType, payload: Buffer.from(packet.subarray(12 + 4 * csrcs)) });
    });
    return this;
  }

  get port(): number {
    return this.socket.address().port;
  }

  /**
   * Sends a tone of `frequency` Hz to `port` at `address`, 20 ms a packet, until stop(). Paced by
   * the wall clock as a phone is: packet i is due 20 × i ms after the start, and a late timer (a
   * loaded machine) sends every packet that is due, so the far end gets a continuous stream rather
   * than one with a gap for each late wake-up.
   */
  startTone(frequency: number, port: number, address = '127.0.0.1'): void {
    this.stop();
    const step = (2 * Math.PI * frequency) / 8000;
    const startedAt = performance.now();
    let sent = 0;
    const sendOne = (): void => {
      const packet = Buffer.alloc(12 + 160);
      packet[0] = 0x80;
      packet[1] = 0;
      packet.writeUInt16BE(this.#sequence, 2);
      packet.writeUInt32BE(this.#timestamp >>> 0, 4);
      packet.writeUInt32BE(this.#ssrc >>> 0, 8);
      for (let i = 0; i < 160; i++) {
        packet[12 + i] = linearToUlaw(Math.round(8000 * Math.sin(this.#phase)));
        this.#phase += step;
      }
      this.#phase %= 2 * Math.PI;
      this.#sequence = (this.#sequence + 1) & 0xffff;
      this.#timestamp = (this.#timestamp + 160) >>> 0;
      this.socket.send(packet, port, address);
    };
    const sendDue = (): void => {
      const due = Math.floor((performance.now() - startedAt) / 20) + 1;
      while (sent < due) {
        sendOne();
        sent++;
      }
    };
    sendDue();
    this.#timer = setInterval(sendDue, 10);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  close(): void {
    this.stop();
    this.socket.close();
  }

  /** The PCMU audio received between `from` and `to` (ms since the epoch), as linear samples. */
  samples(from = 0, to = Number.POSITIVE_INFINITY): Int16Array {
    const packets = this.received.filter((packet) => packet.payloadType === 0 && packet.at >= from && packet.at < to);
    const out = new Int16Array(packets.reduce((sum, packet) => sum + packet.payload.length, 0));
    let offset = 0;
    for (const packet of packets) for (const byte of packet.payload) out[offset++] = ulawToLinear(byte);
    return out;
  }
}

/**
 * What a stretch of audio holds: its loud part's frequency (by zero crossings) and the amplitude
 * there of the frequency `expected` (Goertzel, so a different tone of the same loudness scores low).
 * The amplitude is the median of the 20 ms frames' (one packet each): a sender that skips or
 * repeats a frame on a loaded machine restarts the tone's phase there, and one Goertzel over the
 * whole run would add the pieces out of phase and read a fraction of the tone's real amplitude.
 */
export function dominantTone(samples: Int16Array, expected: number): { frequency: number; amplitude: number; loudSamples: number } {
  const loud = loudestRun(samples);
  let crossings = 0;
  for (let i = 1; i < loud.length; i++) if ((loud[i - 1] < 0) !== (loud[i] < 0)) crossings++;
  const frequency = loud.length === 0 ? 0 : (crossings / 2) * (8000 / loud.length);
  const frameAmplitudes: number[] = [];
  for (let start = 0; start + FRAME <= loud.length; start += FRAME) frameAmplitudes.push(Math.sqrt(2 * goertzelPower(loud, expected, 8000, start, start + FRAME)));
  frameAmplitudes.sort((a, b) => a - b);
  const amplitude = frameAmplitudes.length === 0 ? 0 : frameAmplitudes[frameAmplitudes.length >> 1];
  return { frequency, amplitude, loudSamples: loud.length };
}

/** One 20 ms packet of PCMU at 8 kHz. */
const FRAME = 160;

/** The longest run of 20 ms frames with energy. */
function loudestRun(samples: Int16Array): Int16Array {
  let best: [number, number] = [0, 0];
  let start = -1;
  const frames = Math.floor(samples.length / 160);
  for (let f = 0; f <= frames; f++) {
    let loud = false;
    if (f < frames) {
      let energy = 0;
      for (let i = f * 160; i < f * 160 + 160; i++) energy += samples[i] * samples[i];
      loud = Math.sqrt(energy / 160) > 300;
    }
    if (loud && start < 0) start = f;
    if (!loud && start >= 0) {
      if (f - start > best[1] - best[0]) best = [start, f];
      start = -1;
    }
  }
  return samples.subarray(best[0] * 160, best[1] * 160);
}

/** An RFC 4733 digit from `end` to `port`: events of 20 ms for `ms`, then the end packet three times. */
export async function sendRfc4733(end: RtpToneEnd, port: number, digit: number, ms: number): Promise<void> {
  const ssrc = 0x1234abcd;
  const timestamp = Math.floor(Math.random() * 0xffffffff);
  let sequence = Math.floor(Math.random() * 0xffff);
  const packet = (duration: number, last: boolean, marker: boolean): Buffer => {
    const out = Buffer.alloc(16);
    out[0] = 0x80;
    out[1] = (marker ? 0x80 : 0) | 101;
    out.writeUInt16BE(sequence, 2);
    sequence = (sequence + 1) & 0xffff;
    out.writeUInt32BE(timestamp >>> 0, 4);
    out.writeUInt32BE(ssrc, 8);
    out[12] = digit;
    out[13] = (last ? 0x80 : 0) | 10;
    out.writeUInt16BE(duration, 14);
    return out;
  };
  for (let t = 20; t <= ms; t += 20) {
    end.socket.send(packet(t * 8, false, t === 20), port, '127.0.0.1');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (let i = 0; i < 3; i++) end.socket.send(packet(ms * 8, true, false), port, '127.0.0.1');
}
