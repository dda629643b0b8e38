// The recording fast path: a recording of a SIP call whose stream runs in a media worker is written
// by that worker, from the frames its stream decodes, and the main thread does nothing per frame.
// The main thread keeps the recording (core/recordings: its events, its controls, its end); it
// created and checked the file, closed it, and hands its path over: the worker reopens it for
// appending and writes through the same RecordingWriter the main thread uses (same bytes, same
// silence detector). Control crosses through shared words, not messages, so it is in effect at the
// worker's next tick:
//   PAUSED    1 while paused (nothing written)
//   MUTED     1 while muted (silence written, the detector still hears the party)
//   STOP      1 once the main thread takes the recording back: from then on the stream's frames go
//             to the main thread again, and the worker closes the file at its next tick
// and the worker writes its progress back into the same memory after every tick (samples written,
// the detector's totals), so GET /recordings/live reads them at once. The end is the one message
// (`record-ended`): taken back, or ended in the worker (maximum duration, silence, a failed write).
import { openAudioFileWriter } from '../audio-file.ts';
import { getFileFormat } from '../codecs.ts';
import { isSampleRate, type Frame } from '../frame.ts';
import { RecordingWriter, type OffloadedRecording, type OffloadEnd, type OffloadEnded, type RecordingProgress, type RecordingTick } from '../recording-writer.ts';

const PAUSED = 0;
const MUTED = 1;
const STOP = 2;
const CONTROL_INT32 = 4;
const SAMPLES = 0;
const TALKING_MS = 1;
const PROGRESS_FLOAT64 = 2;
/** Bytes of a recording's control memory. */
export const RECORD_CONTROL_BYTES = CONTROL_INT32 * 4 + PROGRESS_FLOAT64 * 8;

/** What the main thread sends to hand a recording to a stream's worker (the control memory is shared). */
export interface RecordStart {
  /** Names this recording among the stream's: an old one's end is not taken for a new one's. */
  readonly record: number;
  readonly file: string;
  readonly format: string;
  readonly maxDurationSamples: number;
  readonly maxSilenceMs: number;
  readonly progress: RecordingProgress;
  readonly control: SharedArrayBuffer;
}

/** What the worker says when a recording it wrote is over there (RecordingProgress, flattened). */
export interface RecordEnd {
  readonly record: number;
  readonly end: Exclude<OffloadEnd, 'lost'>;
  readonly recordedSamples: number;
  readonly talkingMs?: number;
  readonly silenceMs?: number;
  readonly quietRunMs?: number;
  readonly reason?: string;
}

function views(control: SharedArrayBuffer): { words: Int32Array; progress: Float64Array } {
  return { words: new Int32Array(control, 0, CONTROL_INT32), progress: new Float64Array(control, CONTROL_INT32 * 4, PROGRESS_FLOAT64) };
}

/** The worker's side: one per stream at most. */
export class WorkerRecorder {
  readonly record: number;
  readonly #writer: RecordingWriter;
  readonly #words: Int32Array;
  readonly #progress: Float64Array;

  /**
   * Opens the file for appending; throws when it cannot (the caller reports `open-failed`), or on
   * memory or figures that do not fit (shared memory is trusted no more than a socket).
   */
  constructor(start: RecordStart) {
    const format = getFileFormat(start.format);
    if (!format || !isSampleRate(format.codec.rate)) throw new RangeError(`not a recording format: ${start.format}`);
    if (start.control.byteLength !== RECORD_CONTROL_BYTES) throw new RangeError('recording memory of the wrong size');
    if (typeof start.file !== 'string' || start.file.length === 0) throw new RangeError('no recording file');
    const { words, progress } = views(start.control);
    this.#words = words;
    this.#progress = progress;
    this.record = start.record;
    this.#writer = new RecordingWriter({ rate: format.codec.rate, maxDurationSamples: Math.max(0, start.maxDurationSamples), maxSilenceMs: Math.max(0, start.maxSilenceMs) });
    this.#writer.continueFrom(start.progress);
    this.#writer.attach(openAudioFileWriter(start.file, format, { append: true }));
  }

  /** The main thread took the recording back: the stream's frames are its own again. */
  get stopped(): boolean {
    return Atomics.load(this.#words, STOP) === 1;
  }

  put(frame: Frame): void {
    this.#writer.put(frame);
  }

  /** One tick of the worker: writes 20 ms (unless paused) and publishes the progress. */
  tick(): RecordingTick {
    const words = this.#words;
    const result = this.#writer.tick(Atomics.load(words, PAUSED) === 1, Atomics.load(words, MUTED) === 1);
    const progress = this.#progress;
    progress[SAMPLES] = this.#writer.recordedSamples;
    progress[TALKING_MS] = this.#writer.talkingMs;
    return result;
  }

  get lastError(): unknown {
    return this.#writer.lastError;
  }

  /** Closes the file (flushing what is gathered) and says where the recording got to. */
  close(end: RecordEnd['end'], reason?: string): RecordEnd {
    let closing = end;
    let why = reason;
    try {
      this.#writer.writer?.finalize();
    } catch (error) {
      if (closing === 'taken-back' || closing === 'max-duration' || closing === 'silence') closing = 'write-failed';
      why = error instanceof Error ? error.message : String(error);
    }
    this.#writer.attach(undefined);
    const { recordedSamples, silence } = this.#writer.progress;
    return { record: this.record, end: closing, recordedSamples, ...(silence ?? {}), ...(why !== undefined ? { reason: why } : {}) };
  }
}

/** The main thread's side of a recording its stream's worker writes. */
export class RemoteRecorder implements OffloadedRecording {
  readonly control = new SharedArrayBuffer(RECORD_CONTROL_BYTES);
  readonly #words: Int32Array;
  readonly #progress: Float64Array;
  #over = false;

  constructor(
    readonly record: number,
    progress: RecordingProgress,
    paused: boolean,
    muted: boolean,
    private readonly onEnded: OffloadEnded,
    /** Called once the recording is no longer the worker's (taken back, ended, or lost): the stream forgets it. */
    private readonly onOver: (recorder: RemoteRecorder) => void,
  ) {
    const { words, progress: figures } = views(this.control);
    this.#words = words;
    this.#progress = figures;
    words[PAUSED] = paused ? 1 : 0;
    words[MUTED] = muted ? 1 : 0;
    figures[SAMPLES] = progress.recordedSamples;
    figures[TALKING_MS] = progress.silence?.talkingMs ?? 0;
  }

  get recordedSamples(): number {
    return this.#progress[SAMPLES];
  }

  get talkingMs(): number {
    return this.#progress[TALKING_MS];
  }

  /** Taken back (or over): the stream's frames go to the main thread. */
  get returning(): boolean {
    return this.#over || Atomics.load(this.#words, STOP) === 1;
  }

  get over(): boolean {
    return this.#over;
  }

  pause(paused: boolean): void {
    Atomics.store(this.#words, PAUSED, paused ? 1 : 0);
  }

  mute(muted: boolean): void {
    Atomics.store(this.#words, MUTED, muted ? 1 : 0);
  }

  takeBack(): void {
    if (this.#over || Atomics.load(this.#words, STOP) === 1) return;
    Atomics.store(this.#words, STOP, 1);
    this.onOver(this);
  }

  /** The worker said the recording is over there. */
  ended(message: RecordEnd): void {
    if (this.#over) return;
    this.#over = true;
    Atomics.store(this.#words, STOP, 1);
    this.onOver(this);
    const silence = message.talkingMs !== undefined ? { talkingMs: message.talkingMs, silenceMs: message.silenceMs ?? 0, quietRunMs: message.quietRunMs ?? 0 } : undefined;
    this.onEnded(message.end, { recordedSamples: message.recordedSamples, silence }, message.reason);
  }

  /** The stream went away with its worker: the file holds what the worker flushed. */
  lost(reason: string): void {
    if (this.#over) return;
    this.#over = true;
    Atomics.store(this.#words, STOP, 1);
    this.onOver(this);
    // The detector's last published talking time is all that matters at the end (silence = total − talking).
    this.onEnded('lost', { recordedSamples: this.recordedSamples, silence: { talkingMs: this.talkingMs, silenceMs: 0, quietRunMs: 0 } }, reason);
  }
}
