// The recordings subsystem: live recordings of channels and bridges (keyed by name while they
// run), the stored recordings on disk, and the one media clock listener that drives every
// recording. The checks and messages follow Asterisk's res_stasis_recording and the ARI resources.
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { getCodec, getFileFormat, type FileFormat } from '../../media/codecs.ts';
import type { Applications } from '../applications.ts';
import type { Bridge } from '../bridges/bridge.ts';
import type { Channel } from '../channels/channel.ts';
import type { Channels } from '../channels/channels.ts';
import { ConflictError, CoreError, InvalidError, NotFoundError, UnprocessableError } from '../errors.ts';
import type { MediaEngine } from '../media-engine.ts';
import { nameErrorFor, RecordingNameError, RecordingsDirectory, storageError, type ResolvedName } from './directory.ts';
import { LiveRecording, NotRecordingError, type IfExists, type LiveRecordingEnvironment, type RecordingOperation } from './live-recording.ts';
import { BridgeSource, ChannelAudioSource, ChannelSource, type ChannelAudioDirection, type RecordingSource } from './sources.ts';
import { RecordingStore } from './store.ts';
import type { EndableCollection } from '../../util/lifecycle.ts';
import { LogThrottle } from '../../util/log-throttle.ts';
import { recoverPartialRecordings } from './recovery.ts';

export type TerminateOn = 'none' | 'any' | '*' | '#';

export interface RecordRequest {
  readonly name: string;
  readonly format: string;
  readonly maxDurationSeconds?: number;
  readonly maxSilenceSeconds?: number;
  readonly ifExists?: IfExists;
  readonly beep?: boolean;
  readonly terminateOn?: TerminateOn;
}

/** A recording to an explicit file, as the dialplan's Record makes it. */
export interface FileRecordRequest {
  /** Absolute path without extension. */
  readonly base: string;
  readonly format: string;
  readonly maxDurationSeconds: number;
  readonly maxSilenceSeconds: number;
  readonly append: boolean;
  readonly beep: boolean;
  readonly terminateDigits: string;
}

export interface RecordingsOptions {
  readonly dir: string;
  readonly media: MediaEngine;
  readonly applications: Applications;
  readonly channels: Channels;
  readonly log: Logger;
}

const ALL_DIGITS = '#*0123456789ABCD';
/** At most one log line per kind of recording problem in this time. */
const WARN_INTERVAL_MS = 10_000;
/** Error codes that mean no byte more can be written. */
const DISK_FULL = new Set(['ENOSPC', 'EDQUOT']);

function terminateDigits(terminateOn: TerminateOn | undefined): string {
  switch (terminateOn) {
    case 'any':
      return ALL_DIGITS;
    case '*':
    case '#':
      return terminateOn;
    default:
      return '';
  }
}

/** The file format a recording request names; UnprocessableError when unknown. */
export function recordingFormat(name: string): FileFormat {
  const format = name === name.toLowerCase() ? getFileFormat(name) : undefined;
  if (!format || name.startsWith('.')) throw new UnprocessableError('specified format is unknown on this system');
  return format;
}

interface Prepared {
  readonly resolved: ResolvedName;
  readonly format: FileFormat;
  readonly formatName: string;
  readonly file: string;
}

export class Recordings implements EndableCollection {
  readonly directory: RecordingsDirectory;
  readonly store: RecordingStore;
  private readonly options: RecordingsOptions;
  /** Recordings made through ARI, by name, while they run. */
  private readonly live = new Map<string, LiveRecording>();
  /** Every running recording (the dialplan's included), in start order. */
  private readonly running = new Set<LiveRecording>();
  private ticking = false;
  private readonly environment: LiveRecordingEnvironment;
  private readonly warnings = new Map<string, LogThrottle>();

  constructor(options: RecordingsOptions) {
    this.options = options;
    this.directory = new RecordingsDirectory(options.dir);
    this.store = new RecordingStore(this.directory);
    this.environment = {
      publish: (event, recording) => this.options.applications.publish(event, recording.source.scope),
      ended: (recording) => this.ended(recording),
      removeFile: (file) => this.store.removeFile(file),
      checkFile: (file) => {
        if (this.directory.contains(path.resolve(file))) this.directory.checkWritable(file);
      },
      warn: (message, err) => this.warnThrottled(message, err),
    };
  }

  /** Creates the recordings directory and recovers what a killed server left half-written; called at start. */
  open(): void {
    this.directory.ensure();
    const { recovered, removed } = recoverPartialRecordings(this.directory.root, (file, err) => this.options.log.warn({ err, file }, 'could not recover a partial recording'));
    if (recovered.length > 0) this.options.log.warn({ recordings: recovered }, `recovered ${recovered.length} recording(s) left unfinished by a server that stopped without finishing them`);
    if (removed > 0) this.options.log.info({ removed }, 'removed empty partial recording files');
  }

  /**
   * Recording problems, one line per kind every WARN_INTERVAL_MS at most: a full disk fails every
   * recording on every tick, and thousands of stack traces would bury the one line that matters.
   */
  private warnThrottled(message: string, err: unknown): void {
    const kind = message.split(';')[0]!;
    let throttle = this.warnings.get(kind);
    if (!throttle) this.warnings.set(kind, (throttle = new LogThrottle(WARN_INTERVAL_MS)));
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    throttle.run((suppressed) => {
      const more = suppressed > 0 ? { suppressed } : {};
      if (code !== undefined && DISK_FULL.has(code)) this.options.log.error({ code, ...more }, `${message}: the disk is full`);
      else this.options.log.warn({ err, ...more }, message);
    });
  }

  /** Recordings running now (ARI's and the dialplan's). */
  get size(): number {
    return this.running.size;
  }

  list(): LiveRecording[] {
    return [...this.running];
  }

  /** Starts recording what a channel receives. The channel's Stasis control is the caller's concern. */
  recordChannel(channel: Channel, request: RecordRequest): LiveRecording {
    const prepared = this.prepare(request);
    if (channel.bridgeId !== undefined) throw new ConflictError('Channel is in a bridge');
    this.checkConflicts(request, prepared);
    this.ensureDir(prepared);
    // Asterisk answers a channel it is asked to record (ast_auto_answer).
    if (!channel.answered && channel.direction === 'inbound' && !channel.hangingUp) channel.answer();
    return this.start(new ChannelSource(channel), request, prepared, true);
  }

  /** Starts recording the whole mix of a bridge. */
  recordBridge(bridge: Bridge, request: RecordRequest & { readonly recorderFormat?: string }): LiveRecording {
    const prepared = this.prepare(request);
    if (request.recorderFormat && !getCodec(request.recorderFormat) && !getFileFormat(request.recorderFormat)) {
      throw new UnprocessableError('specified recorder_format is unknown on this system');
    }
    this.checkConflicts(request, prepared);
    this.ensureDir(prepared);
    const source = new BridgeSource(bridge, terminateDigits(request.terminateOn) !== '');
    return this.start(source, request, prepared, true);
  }

  /**
   * Records a channel into an explicit file, without ARI events or a live name (the dialplan's
   * Record). The caller has checked the path; throws UnprocessableError for an unknown format.
   */
  recordChannelToFile(channel: Channel, request: FileRecordRequest): LiveRecording {
    const format = recordingFormat(request.format);
    const file = `${request.base}.${request.format}`;
    const recording = new LiveRecording(this.environment, new ChannelSource(channel), {
      name: file,
      formatName: request.format,
      format,
      file,
      ifExists: request.append ? 'append' : 'overwrite',
      maxDurationSeconds: request.maxDurationSeconds,
      maxSilenceSeconds: request.maxSilenceSeconds,
      beep: request.beep,
      terminateDigits: request.terminateDigits,
      announce: false,
    });
    this.track(recording);
    return recording;
  }

  /**
   * Records what a channel hears and says (MixMonitor) into an explicit file, without ARI events:
   * `both` mixed, or one direction. Ends with the channel (or when stopped); the file is final
   * then, on shutdown too.
   */
  recordChannelAudioToFile(
    channel: Channel,
    request: { readonly base: string; readonly format: string; readonly append: boolean; readonly direction: ChannelAudioDirection; readonly onlyWhileBridged: boolean },
  ): LiveRecording {
    const format = recordingFormat(request.format);
    const file = `${request.base}.${request.format}`;
    const recording = new LiveRecording(this.environment, new ChannelAudioSource(channel, request.direction, request.onlyWhileBridged), {
      name: file,
      formatName: request.format,
      format,
      file,
      ifExists: request.append ? 'append' : 'overwrite',
      maxDurationSeconds: 0,
      maxSilenceSeconds: 0,
      beep: false,
      terminateDigits: '',
      announce: false,
      onlyReceived: true,
    });
    this.track(recording);
    return recording;
  }

  /** The live recording of that name; NotFoundError when none runs. */
  getLive(name: string): LiveRecording {
    const recording = this.live.get(name);
    if (!recording) throw new NotFoundError('Recording not found');
    return recording;
  }

  /** Applies a live recording control: 404 unknown, 409 when its state does not allow it. */
  control(name: string, operation: RecordingOperation): void {
    const recording = this.getLive(name);
    try {
      recording.control(operation);
    } catch (error) {
      if (error instanceof NotRecordingError) throw new ConflictError(error.message);
      throw error;
    }
  }

  /** Whether a live recording is listening to this channel (bridges refuse to take it). */
  isRecordingChannel(channelId: string): boolean {
    for (const recording of this.running) {
      if (recording.source instanceof ChannelSource && recording.source.channel.id === channelId) return true;
    }
    return false;
  }

  /** Ends every recording and finalises its file (server shutdown). */
  /** Finalises every live recording, keeping its file (shutdown; see util/lifecycle.ts). */
  endAll(): void {
    for (const recording of [...this.running]) recording.finish('done', 'shutdown');
  }

  // ---- internals ------------------------------------------------------------------------------

  private prepare(request: RecordRequest): Prepared {
    if ((request.maxDurationSeconds ?? 0) < 0) throw new InvalidError('max_duration_seconds cannot be negative');
    if ((request.maxSilenceSeconds ?? 0) < 0) throw new InvalidError('max_silence_seconds cannot be negative');
    const format = recordingFormat(request.format);
    return recordingFileCall(() => {
      const resolved = this.directory.resolve(request.name);
      const file = `${resolved.base}.${request.format}`;
      this.directory.checkWritable(file);
      return { resolved, format, formatName: request.format, file };
    });
  }

  /**
   * Creates the name's missing directories (only now, after every check has passed) and checks
   * that the file can be created there, so a refusal comes before anything has started.
   */
  private ensureDir(prepared: Prepared): void {
    recordingFileCall(() => {
      const created = this.directory.ensureDir(prepared.resolved);
      try {
        accessSync(prepared.resolved.dir, constants.W_OK);
      } catch (error) {
        this.directory.removeDirs(created);
        throw error;
      }
    });
  }

  private checkConflicts(request: RecordRequest, prepared: Prepared): void {
    const taken = `Recording '${request.name}' already exists and can not be overwritten`;
    if (this.live.has(request.name)) throw new ConflictError(taken);
    // As ast_fileexists: a file of that name in any format counts.
    if ((request.ifExists ?? 'fail') === 'fail' && this.store.findResolved(prepared.resolved) !== undefined) throw new ConflictError(taken);
  }

  private start(source: RecordingSource, request: RecordRequest, prepared: Prepared, announce: boolean): LiveRecording {
    const recording = new LiveRecording(this.environment, source, {
      name: request.name,
      formatName: prepared.formatName,
      format: prepared.format,
      file: prepared.file,
      ifExists: request.ifExists ?? 'fail',
      maxDurationSeconds: request.maxDurationSeconds ?? 0,
      maxSilenceSeconds: request.maxSilenceSeconds ?? 0,
      beep: request.beep ?? false,
      terminateDigits: terminateDigits(request.terminateOn),
      announce,
    });
    if (recording.active) {
      this.live.set(request.name, recording);
      this.track(recording);
    }
    return recording;
  }

  private track(recording: LiveRecording): void {
    if (!recording.active) return;
    this.running.add(recording);
    if (!this.ticking) {
      this.ticking = true;
      this.options.media.onTick(this.onTick);
    }
  }

  private ended(recording: LiveRecording): void {
    this.running.delete(recording);
    if (this.live.get(recording.name) === recording) this.live.delete(recording.name);
    if (this.running.size === 0 && this.ticking) {
      this.ticking = false;
      this.options.media.offTick(this.onTick);
    }
  }

  private readonly onTick = (): void => {
    for (const recording of this.running) recording.tick();
  };
}

/**
 * Runs a file-system step of starting a recording, answering every failure as the client's
 * error: a name the file system cannot take is 400 "Recording name invalid", a directory that
 * cannot be written 403, anything else the disk refuses 422.
 */
function recordingFileCall<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof CoreError) throw error;
    const problem = error instanceof RecordingNameError ? error : nameErrorFor(error);
    if (problem) throw new InvalidError('Recording name invalid');
    throw storageError(error, 'Recording file cannot be created');
  }
}
