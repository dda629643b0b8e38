// What bench/webrtc-calls.ts's callers send: 20 ms frames of a 1 kHz tone, coded once per process and
// sent over and over, so that a caller costs no coding per packet. G.711 µ-law, or Opus (what
// browsers offer first) coded by the server's own encoder at 48 kHz mono, as a browser sends it.
import { ulawEncode } from '../src/media/g711.ts';
import { OpusStreamEncoder } from '../src/media/opus.ts';

export type CallerCodec = 'ulaw' | 'opus';

export interface CallerAudio {
  readonly codec: CallerCodec;
  readonly payloadType: number;
  /** RTP clock ticks a frame (8 kHz µ-law: 160; Opus's 48 kHz clock: 960). */
  readonly ticksPerFrame: number;
  /** The offer's a=rtpmap (and a=fmtp) lines for the payload type. */
  readonly sdpLines: readonly string[];
  /** One second of frames, sent in turn. */
  readonly frames: readonly Buffer[];
}

const TONE_HZ = 1000;
const FRAMES = 50;

function tone(rate: number, frame: number): Int16Array {
  const samples = new Int16Array(rate / 50);
  const start = frame * samples.length;
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * TONE_HZ * (start + i)) / rate));
  return samples;
}

export function callerAudio(codec: CallerCodec): CallerAudio {
  if (codec === 'ulaw') {
    const frames = Array.from({ length: FRAMES }, (_, i) => {
      const payload = Buffer.alloc(160);
      ulawEncode(tone(8000, i), payload);
      return payload;
    });
    return { codec, payloadType: 0, ticksPerFrame: 160, sdpLines: ['a=rtpmap:0 PCMU/8000'], frames };
  }
  const encoder = new OpusStreamEncoder(48000);
  const scratch = new Uint8Array(1500);
  const frames = Array.from({ length: FRAMES }, (_, i) => {
    const pcm = tone(48000, i);
    return Buffer.from(scratch.subarray(0, encoder.encode(pcm, pcm.length, scratch, 0)));
  });
  encoder.release();
  return { codec, payloadType: 111, ticksPerFrame: 960, sdpLines: ['a=rtpmap:111 opus/48000/2', 'a=fmtp:111 minptime=10;useinbandfec=1'], frames };
}
