// One recording in progress. It is driven by the media clock: on every tick it writes exactly
// 20 ms to its file — the latest frame its source delivered, or silence when none came (so a
// quiet party still gives a file of the real length) — unless it is paused. Muting writes
// silence in place of the audio. The file is finalised (WAV sizes patched, descriptor closed)
// whenever the recording ends, for whatever reason. The per-tick write is media/recording-writer.ts,
// shared with the media workers: a channel recording whose SIP stream runs in a worker is written
// there while nothing else needs the audio here (recording-offload.ts), the recording itself —
// its state, controls, events and end — staying here.
//
// An existing file is never written into: with ifExists=fail the file is created exclusively;
// with overwrite and append the audio goes to a new hidden file beside it (append starts it
// with a copy of the old bytes), which is renamed over the old file when the recording ends.
// Writing into the old entry would go through a hard link to wherever else the link leads.
import { randomBytes } from 'node:crypto';
import { renameSync } from 'node:fs';
import path from 'node:path';
import { isSampleRate, samplesPerFrame } from '../../media/frame.ts';
import { openAudioFileWriter, type AudioFileWriter } from '../../media/audio-file.ts';
import type { FileFormat } from '../../media/codecs.ts';
import { RecordingWriter, type OffloadEnd, type RecordingProgress, type RecordingTick } from '../../media/recording-writer.ts';
import { ToneGenerator } from '../../media/tone-generator.ts';
import { parseToneList } from '../../media/tones.ts';
import type { CoreEvent } from '../applications.ts';
import type { Model } from '../../spec/index.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import { BridgeSource, ChannelSource, type RecordingSource } from './sources.ts';
import type { Endable } from '../../util/lifecycle.ts';
import { RecordingOffload, type OffloadOwner, type PendingTick } from './recording-offload.ts';

export type RecordingState = 'queued' | 'recording' | 'paused' | 'done' | 'failed' | 'canceled';

export type IfExists = 'fail' | 'overwrite' | 'append';

/** Why a recording ended (the dialplan Record application reports it in RECORD_STATUS). */
export type EndReason = 'stopped' | 'canceled' | 'max-duration' | 'silence' | 'dtmf' | 'hangup' | 'shutdown' | 'error';

export interface LiveRecordingOptions {
  /** The name as the client gave it (the key of the live recording). */
  readonly name: string;
  /** The format name as given, which is also the file's extension. */
  readonly formatName: string;
  readonly format: FileFormat;
  /** The file to write, with its extension. */
  readonly file: string;
  readonly ifExists: IfExists;
  /** 0: no limit. */
  readonly maxDurationSeconds: number;
  /** 0: no silence detection. */
  readonly maxSilenceSeconds: number;
  readonly beep: boolean;
  /** The digits that end the recording; empty for none. */
  readonly terminateDigits: string;
  /** Raises RecordingStarted / Finished / Failed (the dialplan's Record does not). */
  readonly announce: boolean;
  /**
   * Writes only the ticks the source gave a frame for, instead of silence for the others
   * (MixMonitor's `b`: the file holds only the time the channel was bridged).
   */
  readonly onlyReceived?: boolean;
}

export interface LiveRecordingEnvironment {
  publish(event: CoreEvent, recording: LiveRecording): void;
  /** Called once when the recording has ended and its file is closed (or removed). */
  ended(recording: LiveRecording): void;
  /** Removes the file of a canceled recording. */
  removeFile(file: string): void;
  /** Just before the file is opened: re-checks the path (it must not have become a link). */
  checkFile(file: string): void;
  warn(message: string, error?: unknown): void;
}

/** The controls of the live recordings resource. */
export type RecordingOperation = 'stop' | 'cancel' | 'pause' | 'unpause' | 'mute' | 'unmute';

/** A control the recording's present state does not allow (409 "Recording not in session"). */
export class NotRecordingError extends Error {}

const BEEP_TONE = '!1000/250';
const BEEP_RATE = 8000;

export class LiveRecording implements Endable {
  readonly name: string;
  readonly formatName: string;
  readonly format: FileFormat;
  readonly file: string;
  readonly targetUri: string;
  readonly source: RecordingSource;
  readonly options: LiveRecordingOptions;
  state: RecordingState = 'queued';
  cause: string | undefined;
  endReason: EndReason | undefined;
  /** The digit that ended the recording, if one did. */
  endDigit: string | undefined;
  muted = false;
  /** Resolves once the recording has ended and its file is final. */
  readonly finished: Promise<LiveRecording>;

  private readonly env: LiveRecordingEnvironment;
  private readonly rate: number;
  /** The per-tick write (the file it writes to is attached once open). */
  private readonly recorder: RecordingWriter;
  private readonly maxDurationSamples: number;
  private writer: AudioFileWriter | undefined;
  /** The hidden file written for overwrite and append, renamed over `file` at the end. */
  private partial: string | undefined;
  private beepGenerator: ToneGenerator | undefined;
  private readonly beepFrame = new Int16Array(samplesPerFrame(BEEP_RATE));
  private started = false;
  /** The recording fast path, for a channel recording (the technology may write the file). */
  private readonly offload: RecordingOffload | undefined;
  /** Ended, and waiting for the file to be closed where it was written (a media worker). */
  private closing: { state: 'done' | 'canceled' | 'failed'; reason: EndReason; cause: string | undefined } | undefined;
  private resolveFinished!: (recording: LiveRecording) => void;

  constructor(env: LiveRecordingEnvironment, source: RecordingSource, options: LiveRecordingOptions) {
    this.env = env;
    this.source = source;
    this.options = options;
    this.name = options.name;
    this.formatName = options.formatName;
    this.format = options.format;
    this.file = options.file;
    this.targetUri = source.targetUri;
    const rate = options.format.codec.rate;
    if (!isSampleRate(rate)) throw new RangeError(`not an engine rate: ${rate}`);
    this.rate = rate;
    this.maxDurationSamples = options.maxDurationSeconds * rate;
    this.recorder = new RecordingWriter({ rate, maxDurationSamples: this.maxDurationSamples, maxSilenceMs: options.maxSilenceSeconds * 1000, onlyReceived: options.onlyReceived });
    const beep = options.beep ? parseToneList(BEEP_TONE) : undefined;
    if (beep) this.beepGenerator = new ToneGenerator(beep, { rate: BEEP_RATE });
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
    if (source instanceof ChannelSource || source instanceof BridgeSource) this.offload = new RecordingOffload(source, this.offloadOwner());
    source.attach({
      frame: (frame) => this.recorder.put(frame),
      dtmf: (digit) => this.onDigit(digit),
      ended: () => this.finish('done', 'hangup'),
    });
  }

  get active(): boolean {
    return (this.state === 'queued' || this.state === 'recording' || this.state === 'paused') && this.closing === undefined;
  }

  /** Samples in the file so far, wherever it is written. */
  private get recordedSamples(): number {
    return this.offload?.elsewhere?.recordedSamples ?? this.recorder.recordedSamples;
  }

  /** Length of the audio in the file written by this recording, in milliseconds. */
  get recordedMs(): number {
    return (this.recordedSamples * 1000) / this.rate;
  }

  /** The file is written by the channel's technology (a media worker) now. */
  get writtenElsewhere(): boolean {
    return this.offload?.writtenThere !== undefined;
  }

  /** The LiveRecording model. Durations are whole seconds, known once recording has begun. */
  toJson(): Model<'LiveRecording'> {
    const json: Model<'LiveRecording'> = { name: this.name, format: this.formatName, target_uri: this.targetUri, state: this.state };
    if (this.started) {
      const total = Math.round(this.recordedMs / 1000);
      json.duration = total;
      json.total_duration = total;
      if (this.recorder.detecting) {
        const talkingMs = this.offload?.elsewhere?.talkingMs ?? this.recorder.talkingMs;
        const talking = Math.min(total, Math.round(talkingMs / 1000));
        json.talking_duration = talking;
        json.silence_duration = total - talking;
      }
    }
    if (this.cause !== undefined) json.cause = this.cause;
    return json;
  }

  /**
   * Applies a control as Asterisk's table does: stop and cancel of a queued recording discard it;
   * pause, unpause, mute and unmute need a recording or paused one (NotRecordingError otherwise)
   * and are idempotent.
   */
  control(operation: RecordingOperation): void {
    if (!this.active) throw new NotRecordingError('Recording not in session');
    if (this.state === 'queued') {
      if (operation === 'stop' || operation === 'cancel') this.finish('canceled', operation === 'stop' ? 'stopped' : 'canceled');
      else throw new NotRecordingError('Recording not in session');
      return;
    }
    switch (operation) {
      case 'stop':
        this.finish('done', 'stopped');
        return;
      case 'cancel':
        this.finish('canceled', 'canceled');
        return;
      case 'pause':
        this.state = 'paused';
        this.offload?.pause(true);
        return;
      case 'unpause':
        this.state = 'recording';
        this.offload?.pause(false);
        return;
      case 'mute':
        this.muted = true;
        this.offload?.mute(true);
        return;
      case 'unmute':
        this.muted = false;
        this.offload?.mute(false);
        return;
    }
  }

  /** One media clock tick. */
  tick(): void {
    if (!this.active) return;
    this.source.tick();
    if (!this.active) return;
    if (this.state === 'queued') {
      if (this.beepGenerator) {
        this.beepGenerator.fill(this.beepFrame);
        this.source.beep(this.beepFrame);
        if (this.beepGenerator.finished) this.beepGenerator = undefined;
        return;
      }
      if (!this.begin()) return;
    }
    const offload = this.offload;
    if (offload?.away) {
      // Written there; or on its way back, the tick kept to be written first when the file is here again.
      offload.keep(this.recorder.takeReceived(), this.state === 'paused', this.muted);
      return;
    }
    if (!this.ended(this.recorder.tick(this.state === 'paused', this.muted))) offload?.consider();
  }

  /** Ends the recording when a tick says so; true when it ended. */
  private ended(result: RecordingTick): boolean {
    switch (result) {
      case 'ok':
        return false;
      case 'write-failed':
        if (this.recorder.lastError !== undefined) this.env.warn('could not write to the recording file', this.recorder.lastError);
        this.recorder.lastError = undefined;
        this.finish('failed', 'error', 'Could not write to the recording file');
        return true;
      case 'max-duration':
        this.finish('done', 'max-duration');
        return true;
      case 'silence':
        this.finish('done', 'silence');
        return true;
    }
  }

  /** What the fast path needs of this recording (recording-offload.ts). */
  private offloadOwner(): OffloadOwner {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const recording = this;
    return {
      get file() {
        return recording.partial ?? recording.file;
      },
      formatName: this.formatName,
      maxDurationSamples: this.maxDurationSamples,
      maxSilenceMs: this.options.maxSilenceSeconds * 1000,
      get paused() {
        return recording.state === 'paused';
      },
      get muted() {
        return recording.muted;
      },
      get progress(): RecordingProgress {
        return recording.recorder.progress;
      },
      release: () => this.releaseFile(),
      resume: (progress, pending) => this.resume(progress, pending),
      endedThere: (end, progress, reason) => this.endedThere(end, progress, reason),
      closed: (progress) => this.closedThere(progress),
    };
  }

  /** Closes the file here for the technology to reopen; false (the recording failed) when it could not. */
  private releaseFile(): boolean {
    try {
      this.writer?.finalize();
    } catch (error) {
      this.env.warn('could not hand the recording file over', error);
      this.finish('failed', 'error', 'Could not write to the recording file');
      return false;
    }
    this.writer = undefined;
    this.recorder.attach(undefined);
    return true;
  }

  /** The file is back from the technology: reopened for appending, with the ticks seen meanwhile written first. */
  private resume(progress: RecordingProgress, pending: readonly PendingTick[]): void {
    this.recorder.continueFrom(progress);
    if (!this.active) return;
    try {
      this.writer = openAudioFileWriter(this.partial ?? this.file, this.format, { append: true });
    } catch (error) {
      this.env.warn('could not reopen the recording file', error);
      this.finish('failed', 'error', 'Could not write to the recording file');
      return;
    }
    this.recorder.attach(this.writer);
    for (const tick of pending) if (this.ended(this.recorder.tickWith(tick.samples, tick.paused, tick.muted))) return;
  }

  /** The recording ended where the technology wrote it; its file is closed there. */
  private endedThere(end: Exclude<OffloadEnd, 'taken-back'>, progress: RecordingProgress, reason: string | undefined): void {
    this.recorder.continueFrom(progress);
    switch (end) {
      case 'max-duration':
        this.finish('done', 'max-duration');
        return;
      case 'silence':
        this.finish('done', 'silence');
        return;
      case 'lost':
        // As the channel's own crash: its worker died with it, and the channel hangs up (cause 38).
        this.finish('done', 'hangup');
        return;
      default:
        this.env.warn(`could not write to the recording file in its media worker${reason ? `: ${reason}` : ''}`);
        this.finish('failed', 'error', end === 'open-failed' ? 'Could not open the recording file' : 'Could not write to the recording file');
    }
  }

  /** Taken back to end: the technology closed the file, the recording finishes now. */
  private closedThere(progress: RecordingProgress): void {
    this.recorder.continueFrom(progress);
    const closing = this.closing;
    if (!closing) return;
    this.closing = undefined;
    this.complete(closing.state, closing.reason, closing.cause);
  }

  /** Stops the recording and keeps its file (the lifecycle verb, see util/lifecycle.ts). */
  end(): void {
    this.finish('done', 'stopped');
  }

  /**
   * Ends the recording: closes (finalises) the file, removes it when canceled, raises the event
   * and tells the owner. Safe to call more than once; only the first call counts.
   */
  finish(state: 'done' | 'canceled' | 'failed', reason: EndReason, cause?: string): void {
    if (!this.active) return;
    this.source.detach();
    // Written elsewhere: it comes back to be closed there first (closedThere finishes).
    if (this.offload?.close()) {
      this.closing = { state, reason, cause };
      return;
    }
    this.complete(state, reason, cause);
  }

  /** The end, with the file here (or closed where it was written). */
  private complete(state: 'done' | 'canceled' | 'failed', reason: EndReason, cause: string | undefined): void {
    let finalState = state;
    let finalCause = cause;
    if (this.started) {
      const written = this.partial ?? this.file;
      let complete = true;
      try {
        this.writer?.finalize();
      } catch (error) {
        complete = false;
        this.env.warn('could not finalise the recording file', error);
        if (finalState === 'done') {
          finalState = 'failed';
          finalCause = 'Could not finish the recording file';
        }
      }
      if (finalState === 'canceled') {
        // Only what this recording wrote; a file it was to replace or extend stays as it was.
        try {
          this.env.removeFile(written);
        } catch (error) {
          this.env.warn('could not remove the canceled recording file', error);
        }
      } else if (this.partial !== undefined && complete) {
        // What was recorded is kept even when the recording failed part-way, as a direct write would.
        try {
          renameSync(this.partial, this.file);
        } catch (error) {
          // The audio stays in the hidden file rather than being lost.
          this.env.warn(`could not move the recording into place; it is kept in ${this.partial}`, error);
          finalState = 'failed';
          finalCause = 'Could not finish the recording file';
        }
      }
    }
    this.state = finalState;
    this.cause = finalCause;
    this.endReason = reason;
    if (this.options.announce) this.publish(finalState === 'failed' ? 'RecordingFailed' : 'RecordingFinished');
    this.env.ended(this);
    this.resolveFinished(this);
  }

  private onDigit(digit: string): void {
    if (this.state !== 'recording' && this.state !== 'paused') return;
    if (!this.options.terminateDigits.includes(digit.toUpperCase())) return;
    this.endDigit = digit;
    this.finish('done', 'dtmf');
  }

  /** Opens the file and starts recording; false when that failed (the recording has failed). */
  private begin(): boolean {
    try {
      this.env.checkFile(this.file);
      if (this.options.ifExists === 'fail') {
        // Created exclusively, so a file that appeared since the request is never overwritten.
        this.writer = openAudioFileWriter(this.file, this.format, { exclusive: true });
      } else {
        const partial = partialFileFor(this.file);
        const copyFrom = this.options.ifExists === 'append' ? this.file : undefined;
        this.writer = openAudioFileWriter(partial, this.format, { exclusive: true, copyFrom });
        this.partial = partial;
      }
    } catch (error) {
      this.env.warn('could not open the recording file', error);
      const code = (error as NodeJS.ErrnoException).code;
      this.finish('failed', 'error', code === 'EEXIST' ? 'Recording file already exists' : 'Could not open the recording file');
      return false;
    }
    this.recorder.attach(this.writer);
    this.started = true;
    this.state = 'recording';
    if (this.options.announce) this.publish('RecordingStarted');
    return true;
  }

  private publish(type: 'RecordingStarted' | 'RecordingFinished' | 'RecordingFailed'): void {
    this.env.publish({ type, timestamp: formatAriDate(), recording: this.toJson() }, this);
  }
}

/** Longest file name most file systems take, in bytes. */
const NAME_MAX = 255;

/**
 * A new hidden name beside `file` for the audio that will replace it: `.<name>.<random>.partial`,
 * so an operator can tell whose audio a file left by a crash holds (a shorter name when that
 * would be too long). Its extension is no recording format, so it is never listed or played.
 */
function partialFileFor(file: string): string {
  const suffix = `.${randomBytes(6).toString('hex')}.partial`;
  const name = `.${path.basename(file)}${suffix}`;
  return path.join(path.dirname(file), Buffer.byteLength(name) <= NAME_MAX ? name : `.recording${suffix}`);
}
