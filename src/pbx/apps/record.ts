// Record(filename.format[,silence[,maxduration[,options]]]): records what the caller says into a
// file, on the media engine, as app_record does. The file lives in the recordings directory: a
// relative filename inside it, an absolute one only when it points there (as MixMonitor). The recording ends on `#` (or as the options say), after `silence` seconds
// of silence, after `maxduration` seconds, or on hangup; RECORD_STATUS says which:
// DTMF, OPERATOR, SILENCE, TIMEOUT, HANGUP, SKIP or ERROR.
import { existsSync } from 'node:fs';
import type { Channel } from '../../core/channels/channel.ts';
import { RecordingNameError } from '../../core/recordings/directory.ts';
import { recordingFormat } from '../../core/recordings/recordings.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import type { PbxServices } from '../application-services.ts';

const ALL_DIGITS = '#*0123456789ABCD';
const OPERATOR_KEY = '0';

interface RecordOptions {
  readonly append: boolean;
  readonly keep: boolean;
  readonly noAnswer: boolean;
  readonly operator: boolean;
  readonly quiet: boolean;
  readonly skip: boolean;
  readonly star: boolean;
  readonly anyDigit: boolean;
  readonly ignoreTerminator: boolean;
}

function parseOptions(text: string): RecordOptions {
  const has = (letter: string): boolean => text.includes(letter);
  return {
    append: has('a'),
    keep: has('k'),
    noAnswer: has('n'),
    operator: has('o'),
    quiet: has('q'),
    skip: has('s'),
    star: has('t'),
    anyDigit: has('y'),
    ignoreTerminator: has('x'),
  };
}

/** Whole seconds from an argument; 0 for absent, negative or malformed values (with a warning for malformed). */
function seconds(value: string | undefined, what: string, services: PbxServices): number {
  if (value === undefined || value.trim() === '') return 0;
  const match = /^\s*(-?\d+)/.exec(value);
  const parsed = match ? Number.parseInt(match[1], 10) : Number.NaN;
  if (!Number.isFinite(parsed) || parsed < 0) {
    services.log.warn(`'${value}' is not a valid ${what}`);
    return 0;
  }
  return parsed;
}

/** Replaces each `%d` with the first count that names no existing file. */
function numbered(name: string, exists: (candidate: string) => boolean): string {
  for (let count = 0; ; count++) {
    const candidate = name.replaceAll('%d', String(count));
    if (!exists(candidate)) return candidate;
  }
}

export const record: DialplanApplication = {
  name: 'Record',
  synopsis: 'Records the caller to a file (silence, maximum duration, options; RECORD_STATUS)',
  async execute(channel, args, services): Promise<AppOutcome> {
    const [filename, silenceArg, maxArg, optionText] = args;
    const status = (value: string): void => {
      // A channel already gone has nobody left to read it.
      if (!channel.destroyed) channel.setSystemVariable('RECORD_STATUS', value);
    };
    if (!filename) {
      services.log.warn({ channel: channel.name }, 'Record requires an argument (filename)');
      status('ERROR');
      return 'stop';
    }
    // The format follows the last dot (a dot may appear in the name), else a colon.
    let separator = filename.lastIndexOf('.');
    if (separator < 0) separator = filename.indexOf(':');
    const extension = separator < 0 ? '' : filename.slice(separator + 1);
    let name = separator < 0 ? filename : filename.slice(0, separator);
    if (separator < 0) {
      services.log.warn({ channel: channel.name }, 'No extension specified to filename!');
      status('ERROR');
      return 'stop';
    }
    const silence = seconds(silenceArg, 'silence duration', services);
    const maxDuration = seconds(maxArg, 'maximum duration', services);
    const options = parseOptions(args.length >= 4 ? (optionText ?? '') : '');
    let terminator = options.ignoreTerminator ? '' : options.star ? '*' : '#';
    if (options.anyDigit) terminator = ALL_DIGITS;
    const digits = options.operator ? terminator + OPERATOR_KEY : terminator;

    const recordings = services.recordings;
    if (!recordings) {
      services.log.warn({ channel: channel.name }, 'Record: recording is not available');
      status('ERROR');
      return 'next';
    }
    // Where the file goes: inside the recordings directory, as for MixMonitor and ARI. An absolute
    // name is taken only when it lies there: the server may run as root, and a dialplan variable can
    // carry what a caller dialled.
    const locate = (candidate: string): { base: string; ensure: () => void } => {
      const resolved = recordings.directory.resolve(recordings.directory.nameOfPath(candidate));
      return { base: resolved.base, ensure: () => recordings.directory.ensureDir(resolved) };
    };
    let target: { base: string; ensure: () => void };
    try {
      if (name.includes('%d')) {
        name = numbered(name, (candidate) => existsSync(`${locate(candidate).base}.${extension}`));
        channel.setSystemVariable('RECORDED_FILE', name);
      }
      target = locate(name);
    } catch (error) {
      if (!(error instanceof RecordingNameError)) throw error;
      services.log.warn({ channel: channel.name, file: filename }, 'Record: the file name leaves the recordings directory');
      status('ERROR');
      return 'next';
    }

    if (!channel.answered) {
      if (options.skip) {
        status('SKIP');
        return 'next';
      }
      if (!options.noAnswer) channel.answer();
    }
    if (channel.hangingUp) return 'stop';

    let recording;
    try {
      recordingFormat(extension);
      target.ensure();
      recording = recordings.recordChannelToFile(channel, {
        base: target.base,
        format: extension,
        maxDurationSeconds: maxDuration,
        maxSilenceSeconds: silence,
        append: options.append,
        beep: !options.quiet,
        terminateDigits: digits,
      });
    } catch (error) {
      services.log.warn({ err: error, channel: channel.name, file: filename }, `Could not create file ${filename}`);
      status('ERROR');
      return 'next';
    }
    const done = await recording.finished;
    return finish(channel, done.endReason, done.endDigit, options, done.file, recordings.store.removeFile.bind(recordings.store), status);
  },
};

function finish(
  channel: Channel,
  reason: string | undefined,
  digit: string | undefined,
  options: RecordOptions,
  file: string,
  remove: (file: string) => void,
  status: (value: string) => void,
): AppOutcome {
  switch (reason) {
    case 'dtmf':
      status(options.operator && digit === OPERATOR_KEY ? 'OPERATOR' : 'DTMF');
      return 'next';
    case 'silence':
      status('SILENCE');
      return 'next';
    case 'max-duration':
      status('TIMEOUT');
      return 'next';
    case 'hangup':
    case 'shutdown':
      status('HANGUP');
      // As app_record: what was said is thrown away on hangup unless `k` keeps it (a server
      // shutdown is not the caller hanging up: the file stays).
      if (!options.keep && reason === 'hangup') {
        try {
          remove(file);
        } catch {
          // Nothing more to do for a file that cannot be removed.
        }
      }
      return 'stop';
    default:
      status('ERROR');
      return channel.hangingUp ? 'stop' : 'next';
  }
}
