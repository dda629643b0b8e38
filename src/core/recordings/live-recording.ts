// One recording in progress. It is driven by the media clock: on every tick it writes exactly
// 20 ms to its file — the latest frame its source delivered, or silence when none came (so a
// quiet party still gives a file of the real length) — unless it is paused. Muting writes
// silence in place of the audio. The file is finalised (WAV sizes patched, descriptor closed)
// whenever the recording ends, for whatever reason.
//
// An existing file is never written into: with ifExists=fail the file is created exclusively;
// with overwrite and append the audio goes to a new hidden file beside it (append starts it
// with a copy of the old bytes), which is renamed over the old file when the recording ends.
// Writing into the old entry would go through a hard link to wherever else the link leads.
import { randomBytes } from 'node:crypto';
import { renameSync } from 'node:fs';
import path from 'node:path';
import { samplesPerFrame } from '../../media/frame.ts';
import { FrameSlot } from '../../media/frame-slot.ts';
import { openAudioFileWriter, type AudioFileWriter } from '../../media/audio-file.ts';
import type { FileFormat } from '../../media/codecs.ts';
import { SilenceDetector } from '../../media/silence-detector.ts';
import { ToneGenerator } from '../../media/tone-generator.ts';
import { parseToneList } from '../../media/tones.ts';
import type { CoreEvent } from '../applications.ts';
import type { Model } from '../../spec/index.ts';
import { formatAriDate } from '../../util/ari-date.ts';
import type { RecordingSource } from './sources.ts';
import type { Endable } from '../../util/lifecycle.ts';

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

const FLUSH_EVERY_TICKS = 50;
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
  private readonly slot: FrameSlot;
  private readonly silence: Int16Array;
  private readonly detector: SilenceDetector | undefined;
  private readonly maxDurationSamples: number;
  private writer: AudioFileWriter | undefined;
  /** The hidden file written for overwrite and append, renamed over `file` at the end. */
  private partial: string | undefined;
  private beepGenerator: ToneGenerator | undefined;
  private readonly beepFrame = new Int16Array(samplesPerFrame(BEEP_RATE));
  private started = false;
  private recordedSamples = 0;
  private ticksSinceFlush = 0;
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
    this.rate = options.format.codec.rate;
    this.slot = new FrameSlot(options.format.codec.rate);
    this.silence = new Int16Array(samplesPerFrame(this.rate));
    this.detector = options.maxSilenceSeconds > 0 ? new SilenceDetector({ maxSilenceMs: options.maxSilenceSeconds * 1000 }) : undefined;
    this.maxDurationSamples = options.maxDurationSeconds * this.rate;
    const beep = options.beep ? parseToneList(BEEP_TONE) : undefined;
    if (beep) this.beepGenerator = new ToneGenerator(beep, { rate: BEEP_RATE });
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
    source.attach({
      frame: (frame) => this.slot.put(frame),
      dtmf: (digit) => this.onDigit(digit),
      ended: () => this.finish('done', 'hangup'),
    });
  }

  get active(): boolean {
    return this.state === 'queued' || this.state === 'recording' || this.state === 'paused';
  }

  /** Length of the audio in the file written by this recording, in milliseconds. */
  get recordedMs(): number {
    return (this.recordedSamples * 1000) / this.rate;
  }

  /** The LiveRecording model. Durations are whole seconds, known once recording has begun. */
  toJson(): Model<'LiveRecording'> {
    const json: Model<'LiveRecording'> = { name: this.name, format: this.formatName, target_uri: this.targetUri, state: this.state };
    if (this.started) {
      const total = Math.round(this.recordedMs / 1000);
      json.duration = total;
      json.total_duration = total;
      if (this.detector) {
        const talking = Math.min(total, Math.round(this.detector.talkingMs / 1000));
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
        return;
      case 'unpause':
        this.state = 'recording';
        return;
      case 'mute':
        this.muted = true;
        return;
      case 'unmute':
        this.muted = false;
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
    const received = this.slot.take();
    const frame = received ?? this.silence;
    try {
      if (++this.ticksSinceFlush >= FLUSH_EVERY_TICKS) {
        this.ticksSinceFlush = 0;
        this.writer?.flush();
      }
      if (this.state === 'paused') return;
      if (received === undefined && this.options.onlyReceived) return;
      if (!this.writer!.write(this.muted ? this.silence : frame)) {
        this.finish('failed', 'error', 'Could not write to the recording file');
        return;
      }
    } catch (error) {
      // A full disk (ENOSPC) or an I/O error: the recording fails once, instead of the write
      // throwing out of every media tick from now on.
      this.env.warn('could not write to the recording file', error);
      this.finish('failed', 'error', 'Could not write to the recording file');
      return;
    }
    this.recordedSamples += frame.length;
    // As in Asterisk, the detector hears the party even while the file gets silence.
    const silent = this.detector?.process(frame, this.rate) ?? false;
    if (this.maxDurationSamples > 0 && this.recordedSamples >= this.maxDurationSamples) this.finish('done', 'max-duration');
    else if (silent) this.finish('done', 'silence');
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
    let finalState = state;
    let finalCause = cause;
    if (this.writer) {
      const written = this.partial ?? this.file;
      let complete = true;
      try {
        this.writer.finalize();
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
