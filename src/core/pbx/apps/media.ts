// Placeholders for the applications that need the media engine: Playback, MusicOnHold and Record.
// They keep the dialplan flowing with Asterisk's answer/variable behaviour and say plainly, in one
// log line per run, that no media is played or recorded. The media engine replaces this file.
import type { AppOutcome, DialplanApplication } from '../application.ts';
import { waitOnChannel } from '../wait.ts';

const hasOption = (options: string | undefined, name: string): boolean => (options ?? '').toLowerCase().includes(name);

/** Playback(file[&file2...][,options]); options `skip` and `noanswer` as in app_playback. */
export const playback: DialplanApplication = {
  name: 'Playback',
  execute(channel, [files, options], services): AppOutcome {
    if (!files) {
      services.log.warn({ channel: channel.name }, 'Playback requires an argument (filename)');
      return 'stop';
    }
    if (!channel.answered) {
      if (hasOption(options, 'skip')) {
        channel.setVariable('PLAYBACKSTATUS', 'SUCCESS');
        return 'next';
      }
      if (!hasOption(options, 'noanswer')) channel.answer();
    }
    services.log.info(
      { channel: channel.name, files },
      `Playback(${files}): playback is not available until the media engine lands; waiting 0 s instead`,
    );
    channel.setVariable('PLAYBACKSTATUS', 'FAILED');
    return 'next';
  },
};

/** MusicOnHold([class[,duration]]): waits `duration` seconds, or until hangup without one. */
export const musicOnHold: DialplanApplication = {
  name: 'MusicOnHold',
  async execute(channel, [mohClass, duration], services): Promise<AppOutcome> {
    const seconds = Number.parseFloat(duration ?? '');
    const timed = Number.isFinite(seconds) && seconds > 0;
    services.log.info(
      { channel: channel.name, class: mohClass || 'default' },
      `MusicOnHold(${mohClass || 'default'}): music on hold is not available until the media engine lands; waiting ${timed ? `${seconds} s` : 'until hangup'} instead`,
    );
    if (!timed) {
      if (!channel.hangingUp) await new Promise<void>((resolve) => channel.once('hangup', () => resolve()));
      return 'stop';
    }
    return (await waitOnChannel(channel, seconds * 1000)) ? 'next' : 'stop';
  },
};

/** Record(file.format[,silence[,maxduration[,options]]]); options `n` (no answer) and `s` (skip unless answered). */
export const record: DialplanApplication = {
  name: 'Record',
  execute(channel, [file, , , options], services): AppOutcome {
    if (!file) {
      services.log.warn({ channel: channel.name }, 'Record requires an argument (filename.format)');
      return 'stop';
    }
    if (!channel.answered) {
      if ((options ?? '').includes('s')) {
        channel.setVariable('RECORD_STATUS', 'SKIP');
        return 'next';
      }
      if (!(options ?? '').includes('n')) channel.answer();
    }
    services.log.info(
      { channel: channel.name, file },
      `Record(${file}): recording is not available until the media engine lands; nothing was recorded`,
    );
    channel.setVariable('RECORD_STATUS', 'ERROR');
    return 'next';
  },
};
