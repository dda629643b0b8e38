// Loads WAV files of the kinds found in sound libraries and in recordings
// made elsewhere, into mono 16-bit samples at the file's own rate (callers
// resample when the rate differs from the channel's).
import { readFileSync } from 'node:fs';
import { alawToLinear, ulawToLinear } from './g711.ts';
import {
  WAVE_FORMAT_ALAW,
  WAVE_FORMAT_IEEE_FLOAT,
  WAVE_FORMAT_MULAW,
  WAVE_FORMAT_PCM,
  WavFormatError,
  byteSourceOf,
  parseWavLayout,
  type WavFormat,
} from './wav.ts';

export type WavEncoding = 'pcm8' | 'pcm16' | 'pcm24' | 'pcm32' | 'float32' | 'ulaw' | 'alaw';

export interface DecodedWav {
  /** Mono: multi-channel files are averaged down. */
  readonly samples: Int16Array;
  readonly rate: number;
  readonly sourceChannels: number;
  readonly sourceEncoding: WavEncoding;
}

type SampleReader = (bytes: Uint8Array, offset: number) => number;

interface EncodingSupport {
  readonly encoding: WavEncoding;
  readonly bytesPerSample: number;
  readonly read: SampleReader;
}

const readPcm8: SampleReader = (bytes, offset) => (bytes[offset] - 128) << 8;
const readPcm16: SampleReader = (bytes, offset) => ((bytes[offset] | (bytes[offset + 1] << 8)) << 16) >> 16;
// Wider integer formats keep their top 16 bits.
const readPcm24: SampleReader = (bytes, offset) => ((bytes[offset + 1] | (bytes[offset + 2] << 8)) << 16) >> 16;
const readPcm32: SampleReader = (bytes, offset) => ((bytes[offset + 2] | (bytes[offset + 3] << 8)) << 16) >> 16;
const floatView = new DataView(new ArrayBuffer(4));
const readFloat32: SampleReader = (bytes, offset) => {
  for (let i = 0; i < 4; i++) floatView.setUint8(i, bytes[offset + i]);
  const value = Math.round(floatView.getFloat32(0, true) * 32768);
  return value > 32767 ? 32767 : value < -32768 ? -32768 : value;
};
const readUlaw: SampleReader = (bytes, offset) => ulawToLinear(bytes[offset]);
const readAlaw: SampleReader = (bytes, offset) => alawToLinear(bytes[offset]);

function encodingSupportFor(format: WavFormat): EncodingSupport {
  const { formatTag, bitsPerSample } = format;
  if (formatTag === WAVE_FORMAT_PCM) {
    if (bitsPerSample === 8) return { encoding: 'pcm8', bytesPerSample: 1, read: readPcm8 };
    if (bitsPerSample === 16) return { encoding: 'pcm16', bytesPerSample: 2, read: readPcm16 };
    if (bitsPerSample === 24) return { encoding: 'pcm24', bytesPerSample: 3, read: readPcm24 };
    if (bitsPerSample === 32) return { encoding: 'pcm32', bytesPerSample: 4, read: readPcm32 };
  } else if (formatTag === WAVE_FORMAT_IEEE_FLOAT && bitsPerSample === 32) {
    return { encoding: 'float32', bytesPerSample: 4, read: readFloat32 };
  } else if (formatTag === WAVE_FORMAT_MULAW && bitsPerSample === 8) {
    return { encoding: 'ulaw', bytesPerSample: 1, read: readUlaw };
  } else if (formatTag === WAVE_FORMAT_ALAW && bitsPerSample === 8) {
    return { encoding: 'alaw', bytesPerSample: 1, read: readAlaw };
  }
  throw new WavFormatError(`unsupported WAV encoding: format tag ${formatTag}, ${bitsPerSample} bits`);
}

export function decodeWav(bytes: Uint8Array): DecodedWav {
  const layout = parseWavLayout(byteSourceOf(bytes), bytes.length);
  const { format } = layout;
  if (format.channels < 1) throw new WavFormatError('WAV declares no channels');
  if (format.sampleRate < 1) throw new WavFormatError('WAV declares no sample rate');
  const support = encodingSupportFor(format);
  const channels = format.channels;
  // Honour a larger block align (padding) but never a smaller, corrupt one.
  const frameBytes = Math.max(format.blockAlign, support.bytesPerSample * channels);
  const frameCount = Math.floor(layout.dataBytes / frameBytes);
  const samples = new Int16Array(frameCount);
  const read = support.read;
  let offset = layout.dataOffset;
  for (let frame = 0; frame < frameCount; frame++, offset += frameBytes) {
    if (channels === 1) {
      samples[frame] = read(bytes, offset);
      continue;
    }
    let total = 0;
    for (let channel = 0; channel < channels; channel++) total += read(bytes, offset + channel * support.bytesPerSample);
    samples[frame] = Math.round(total / channels);
  }
  return { samples, rate: format.sampleRate, sourceChannels: channels, sourceEncoding: support.encoding };
}

export function readWavFile(path: string): DecodedWav {
  return decodeWav(readFileSync(path));
}
