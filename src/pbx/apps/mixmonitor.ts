// MixMonitor(filename.extension[,options[,command]]) and StopMixMonitor([MixMonitorID]): records
// the whole call on a channel, both directions mixed, in the background while the dialplan goes
// on, as app_mixmonitor does. A relative file name lives in the recordings directory (and may not
// leave it); an absolute one must lie inside it too. The file is final when the channel hangs up,
// StopMixMonitor runs, or the server shuts down. Options: `a` append, `b` only while bridged,
// `r(file)` / `t(file)` also record what the channel receives / sends to separate files,
// `i(var)` keep the MixMonitor's id in a variable. A post-recording command is not run.
import { randomUUID } from 'node:crypto';
import type { Channel } from '../../core/channels/channel.ts';
import { RecordingNameError } from '../../core/recordings/directory.ts';
import type { LiveRecording } from '../../core/recordings/live-recording.ts';
import { recordingFormat, type Recordings } from '../../core/recordings/recordings.ts';
import type { ChannelAudioDirection } from '../../core/recordings/sources.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import type { PbxServices } from '../application-services.ts';

/** MixMonitors one channel may run at once. */
const MAX_MIXMONITORS_PER_CHANNEL = 8;

interface RunningMixMonitor {
  readonly id: string;
  readonly recordings: LiveRecording[];
}

const running = new WeakMap<Channel, RunningMixMonitor[]>();

function parseOptions(text: string): Map<string, string> {
  const options = new Map<string, string>();
  for (let i = 0; i < text.length; i++) {
    const letter = text[i];
    if (text[i + 1] === '(') {
      const close = text.indexOf(')', i + 2);
      const end = close < 0 ? text.length : close;
      options.set(letter, text.slice(i + 2, end));
      i = end;
    } else options.set(letter, '');
  }
  return options;
}

/** `name.ext` inside the recordings directory → base path and format; a RecordingNameError when it leaves it. */
function locate(recordings: Recordings, filename: string): { base: string; format: string; ensure: () => void } {
  const dot = filename.lastIndexOf('.');
  const format = dot > 0 ? filename.slice(dot + 1) : 'wav';
  const name = recordings.directory.nameOfPath(dot > 0 ? filename.slice(0, dot) : filename);
  const resolved = recordings.directory.resolve(name);
  // The format is checked before any directory is made: a refused name leaves nothing behind.
  recordingFormat(format);
  return { base: resolved.base, format, ensure: () => recordings.directory.ensureDir(resolved) };
}

export const mixMonitor: DialplanApplication = {
  name: 'MixMonitor',
  synopsis: 'Records the whole call (both directions mixed) to a file in the background (options a, b, r(), t(), i(); MIXMONITOR_FILENAME)',
  execute(channel, [filename = '', optionText = '', command], services): AppOutcome {
    const recordings = services.recordings;
    if (filename.trim() === '') {
      services.log.warn({ channel: channel.name }, 'MixMonitor requires an argument (filename or ,t(filename) and/or r(filename)');
      return 'next';
    }
    if (!recordings) {
      services.log.warn({ channel: channel.name }, 'MixMonitor: recording is not available');
      return 'next';
    }
    if (command && command.trim() !== '') {
      services.log.warn({ channel: channel.name }, 'MixMonitor: the post-recording command is not run (Patchbay runs no programs from the dialplan)');
    }
    if (channel.hangingUp) return 'stop';
    const list = running.get(channel) ?? [];
    if (list.length >= MAX_MIXMONITORS_PER_CHANNEL) {
      services.log.warn({ channel: channel.name }, `MixMonitor: ${MAX_MIXMONITORS_PER_CHANNEL} already run on ${channel.name}`);
      return 'next';
    }
    const options = parseOptions(optionText);
    const files: { file: string; direction: ChannelAudioDirection }[] = [{ file: filename.trim(), direction: 'both' }];
    if (options.get('r')) files.push({ file: options.get('r')!.trim(), direction: 'read' });
    if (options.get('t')) files.push({ file: options.get('t')!.trim(), direction: 'write' });
    const monitor: RunningMixMonitor = { id: randomUUID(), recordings: [] };
    for (const { file, direction } of files) {
      try {
        const target = locate(recordings, file);
        target.ensure();
        const recording = recordings.recordChannelAudioToFile(channel, {
          base: target.base,
          format: target.format,
          append: options.has('a'),
          direction,
          onlyWhileBridged: options.has('b'),
        });
        monitor.recordings.push(recording);
        if (direction === 'both') channel.setSystemVariable('MIXMONITOR_FILENAME', `${target.base}.${target.format}`);
      } catch (error) {
        const reason = error instanceof RecordingNameError ? 'the file name leaves the recordings directory' : (error as Error).message;
        services.log.warn({ channel: channel.name, file }, `MixMonitor: cannot record to ${file}: ${reason}`);
      }
    }
    if (monitor.recordings.length === 0) return 'next';
    list.push(monitor);
    running.set(channel, list);
    const idVariable = options.get('i');
    if (idVariable) channel.setVariable(idVariable, monitor.id);
    void Promise.all(monitor.recordings.map((recording) => recording.finished)).then(() => {
      const current = running.get(channel);
      const index = current?.indexOf(monitor) ?? -1;
      if (current && index >= 0) current.splice(index, 1);
    });
    return 'next';
  },
};

/** Stops the channel's MixMonitors (or the one with that id); their files are final at once. */
export function stopMixMonitors(channel: Channel, id?: string): number {
  const list = running.get(channel) ?? [];
  let stopped = 0;
  for (const monitor of [...list]) {
    if (id && monitor.id !== id) continue;
    for (const recording of monitor.recordings) recording.finish('done', 'stopped');
    list.splice(list.indexOf(monitor), 1);
    stopped++;
  }
  return stopped;
}

export const stopMixMonitor: DialplanApplication = {
  name: 'StopMixMonitor',
  synopsis: "Stops the channel's MixMonitor recordings (all, or the one whose id is given)",
  execute(channel, [id], services: PbxServices): AppOutcome {
    if (stopMixMonitors(channel, id?.trim() || undefined) === 0) {
      services.log.debug({ channel: channel.name }, 'StopMixMonitor: no MixMonitor runs on the channel');
    }
    return 'next';
  },
};
