// What a recording does at each media clock tick, wherever it runs: the core's LiveRecording on the
// main thread and a media worker's recorder (workers/worker-recorder.ts) both go through this one
// class, so the same frames give the same bytes and the same silence figures in either thread. Each
// tick writes exactly 20 ms — the latest frame received, or silence when none came (so a quiet
// party still gives a file of the real length) — unless paused; a muted recording writes silence in
// place of the audio while the detector still hears the party (as Asterisk does). The writer can be
// taken away and given back (a recording moving between threads closes its file in one and reopens
// it for appending in the other); the counts and the detector's totals move with it.
// Nothing is allocated per tick.
import type { AudioFileWriter } from './audio-file.ts';
import { FrameSlot } from './frame-slot.ts';
import { samplesPerFrame, type Frame, type SampleRate } from './frame.ts';
import { SilenceDetector, type SilenceState } from './silence-detector.ts';

/** Flushes (and WAV header patches) once a second, so a crash loses at most that much. */
export const FLUSH_EVERY_TICKS = 50;

/** What a tick came to: go on, or the reason the recording ends now. */
export type RecordingTick = 'ok' | 'max-duration' | 'silence' | 'write-failed';

export interface RecordingWriterOptions {
  /** The file's rate (its format's codec rate): frames are converted to it on the way in. */
  readonly rate: SampleRate;
  /** 0: no limit. */
  readonly maxDurationSamples: number;
  /** 0: no silence detection (and no talking/silence totals). */
  readonly maxSilenceMs: number;
  /** Writes only the ticks a frame came for (MixMonitor's `b`). */
  readonly onlyReceived?: boolean;
}

/** Where a recording is, handed to whoever goes on with it. */
export interface RecordingProgress {
  readonly recordedSamples: number;
  /** Undefined without silence detection. */
  readonly silence: SilenceState | undefined;
}

export class RecordingWriter {
  readonly rate: SampleRate;
  readonly #slot: FrameSlot;
  readonly #silence: Int16Array;
  readonly #detector: SilenceDetector | undefined;
  readonly #options: RecordingWriterOptions;
  #writer: AudioFileWriter | undefined;
  #recordedSamples = 0;
  #ticksSinceFlush = 0;
  /** The error of the last failed write, for the log. */
  lastError: unknown;

  constructor(options: RecordingWriterOptions) {
    this.#options = options;
    this.rate = options.rate;
    this.#slot = new FrameSlot(options.rate);
    this.#silence = new Int16Array(samplesPerFrame(options.rate));
    this.#detector = options.maxSilenceMs > 0 ? new SilenceDetector({ maxSilenceMs: options.maxSilenceMs }) : undefined;
  }

  get writer(): AudioFileWriter | undefined {
    return this.#writer;
  }

  /** Samples the recording put in its file so far (muted silence included, paused time not). */
  get recordedSamples(): number {
    return this.#recordedSamples;
  }

  /** Talking time the detector heard (0 without silence detection). */
  get talkingMs(): number {
    return this.#detector?.talkingMs ?? 0;
  }

  get detecting(): boolean {
    return this.#detector !== undefined;
  }

  get progress(): RecordingProgress {
    return { recordedSamples: this.#recordedSamples, silence: this.#detector?.state };
  }

  /** Continues from where another writer of the same recording got to. */
  continueFrom(progress: RecordingProgress): void {
    this.#recordedSamples = progress.recordedSamples;
    if (progress.silence) this.#detector?.restore(progress.silence);
  }

  /** The file to write from now on (undefined: none; the caller closes the old one). */
  attach(writer: AudioFileWriter | undefined): void {
    this.#writer = writer;
  }

  /** A frame the source received: the next tick writes it (a newer one replaces it). */
  put(frame: Frame): void {
    this.#slot.put(frame);
  }

  /** Drops a frame put and not yet written. */
  discard(): void {
    this.#slot.take();
  }

  /** The frame put since the last tick, taken without writing it (the caller keeps it for later). */
  takeReceived(): Int16Array | undefined {
    return this.#slot.take();
  }

  /** One tick: writes 20 ms unless paused; says whether the recording goes on. */
  tick(paused: boolean, muted: boolean): RecordingTick {
    return this.tickWith(this.#slot.take(), paused, muted);
  }

  /** A tick with the frame received then (undefined: none came), e.g. one kept while the file was elsewhere. */
  tickWith(received: Int16Array | undefined, paused: boolean, muted: boolean): RecordingTick {
    const writer = this.#writer;
    const frame = received ?? this.#silence;
    if (!writer) return 'write-failed';
    try {
      if (++this.#ticksSinceFlush >= FLUSH_EVERY_TICKS) {
        this.#ticksSinceFlush = 0;
        writer.flush();
      }
      if (paused) return 'ok';
      if (received === undefined && this.#options.onlyReceived) return 'ok';
      if (!writer.write(muted ? this.#silence : frame)) return 'write-failed';
    } catch (error) {
      // A full disk (ENOSPC) or an I/O error: the recording fails once, instead of the write
      // throwing out of every media tick from now on.
      this.lastError = error;
      return 'write-failed';
    }
    this.#recordedSamples += frame.length;
    // As in Asterisk, the detector hears the party even while the file gets silence.
    const silent = this.#detector?.process(frame, this.rate) ?? false;
    if (this.#options.maxDurationSamples > 0 && this.#recordedSamples >= this.#options.maxDurationSamples) return 'max-duration';
    return silent ? 'silence' : 'ok';
  }
}

/** A recording handed to where the packets are handled (a media worker): what it needs to go on there. */
export interface RecordingHandover {
  /** The file, already created and checked by the owner, closed there and reopened for appending. */
  readonly file: string;
  /** Its format's name (codecs.ts getFileFormat). */
  readonly formatName: string;
  readonly maxDurationSamples: number;
  readonly maxSilenceMs: number;
  readonly progress: RecordingProgress;
  readonly paused: boolean;
  readonly muted: boolean;
  /**
   * Closes the file where it was written so far; the technology calls it once it takes the
   * recording, before the file is reopened elsewhere. False: it could not (the hand-over is off).
   */
  release(): boolean;
}

/**
 * Why a handed-over recording came back: the owner took it back (`taken-back`, the file closed
 * there), it ended there (`max-duration`, `silence`), it failed there (`write-failed`,
 * `open-failed`), or the place died with it (`lost`: the file holds what was flushed).
 */
export type OffloadEnd = 'taken-back' | 'max-duration' | 'silence' | 'write-failed' | 'open-failed' | 'lost';

/** A recording written elsewhere (a media worker), as its owner controls it. */
export interface OffloadedRecording {
  /** Samples in the file so far, as last reported (at most a tick old). */
  readonly recordedSamples: number;
  readonly talkingMs: number;
  /** Taken back (by the owner, or by the technology: a worker mix that stopped): frames reach the owner again. */
  readonly returning: boolean;
  pause(paused: boolean): void;
  mute(muted: boolean): void;
  /** Asks for the recording back; `ended` follows with `taken-back` once the file is closed there. Idempotent. */
  takeBack(): void;
}

export type OffloadEnded = (end: OffloadEnd, progress: RecordingProgress, reason?: string) => void;
