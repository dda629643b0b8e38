// Playback(file[&file2...][,options]): plays sound files to the channel through the playback
// engine and waits for each to end, as app_playback does. Options: `skip` (do nothing, SUCCESS, on
// a channel that is not answered) and `noanswer` (play without answering). Every file is tried;
// PLAYBACKSTATUS is FAILED when any could not be played, SUCCESS otherwise. A hangup ends it.
import type { AppOutcome, DialplanApplication } from '../application.ts';

/** app_playback looks for the option words anywhere in the options (strcasestr). */
const hasOption = (options: string | undefined, name: string): boolean => (options ?? '').toLowerCase().includes(name);

export const playback: DialplanApplication = {
  name: 'Playback',
  synopsis: 'Plays sound files (options skip, noanswer; PLAYBACKSTATUS)',
  async execute(channel, [files, options], services): Promise<AppOutcome> {
    if (!files) {
      services.log.warn({ channel: channel.name }, 'Playback requires an argument (filename)');
      return 'stop';
    }
    if (!channel.answered) {
      if (hasOption(options, 'skip')) {
        channel.setSystemVariable('PLAYBACKSTATUS', 'SUCCESS');
        return 'next';
      }
      if (!hasOption(options, 'noanswer')) channel.answer();
    }
    const engine = services.playbacks;
    let failed = false;
    for (const file of files.split('&')) {
      if (channel.hangingUp) return 'stop';
      if (file === '') continue;
      if (!engine) {
        failed = true;
        continue;
      }
      const played = engine.playOnChannel(channel, { media: [`sound:${file}`], language: channel.language, internal: true });
      const state = await engine.finished(played);
      if (channel.hangingUp) return 'stop';
      if (state === 'failed') {
        services.log.warn({ channel: channel.name, file }, `Playback failed on ${channel.name} for ${file}`);
        failed = true;
      }
    }
    channel.setSystemVariable('PLAYBACKSTATUS', failed ? 'FAILED' : 'SUCCESS');
    return 'next';
  },
};
