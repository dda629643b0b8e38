// StasisBroadcast([timeout[,app_filter[,args[,notify_claimed]]]]): offers the channel to the
// Stasis applications (CallBroadcast) and hands it to the first that claims it (POST
// /events/claim), as Stasis(winner,args...) would. STASISSTATUS: SUCCESS (claimed, the Stasis
// session ended), FAILED (claimed by an application that is not connected, or the broadcast
// module is not running), TIMEOUT (nobody claimed it; the dialplan goes on).
import type { DialplanApplication } from '../application.ts';
import { compileAppFilter, type AppFilter } from '../../util/app-filter.ts';
import { waitForStasisExit } from '../../core/channels/wait.ts';
import { splitArgs } from '../../dialplan/args.ts';

const DEFAULT_TIMEOUT_MS = 500;
const MAX_TIMEOUT_MS = 60_000;
const MAX_STASIS_ARGS = 128;
const TRUE_WORDS = new Set(['yes', 'true', 'y', 't', '1', 'on']);

export const stasisBroadcast: DialplanApplication = {
  name: 'StasisBroadcast',
  synopsis: 'Offers the channel to the Stasis applications; the first to claim it gets it (STASISSTATUS)',
  async execute(channel, _args, services, rawData) {
    channel.setSystemVariable('STASISSTATUS', '');
    const [timeoutText = '', filterText = '', argsText = '', notifyText = ''] = rawData === '' ? [] : splitArgs(rawData, ',', 4);
    let timeoutMs = DEFAULT_TIMEOUT_MS;
    if (timeoutText !== '') {
      // sscanf("%d") semantics: leading digits count, the rest is ignored.
      const match = /^\s*([+-]?\d+)/.exec(timeoutText);
      const value = match ? Number(match[1]) : NaN;
      if (Number.isInteger(value) && value >= 0 && value <= MAX_TIMEOUT_MS) timeoutMs = value;
      else services.log.warn({ channel: channel.name, timeout: timeoutText }, `StasisBroadcast: invalid timeout (0-${MAX_TIMEOUT_MS} ms); using ${DEFAULT_TIMEOUT_MS} ms`);
    }
    let filter: AppFilter | undefined;
    if (filterText !== '') {
      const compiled = compileAppFilter(filterText);
      if (typeof compiled === 'string') {
        services.log.warn({ channel: channel.name, app_filter: filterText, problem: compiled }, 'StasisBroadcast: app_filter refused; broadcasting to every application');
      } else {
        filter = compiled;
      }
    }
    const stasisArgs = argsText === '' ? [] : argsText.split(':').slice(0, MAX_STASIS_ARGS);
    const notifyClaimed = TRUE_WORDS.has(notifyText.trim().toLowerCase());

    const broadcasts = services.broadcasts;
    if (!broadcasts) {
      services.log.error({ channel: channel.name }, 'StasisBroadcast: res_stasis_broadcast.so is not running');
      channel.setSystemVariable('STASISSTATUS', 'FAILED');
      return 'next';
    }
    const { winner } = await broadcasts.broadcast(channel, timeoutMs, { filter, notifyClaimed });
    if (winner === undefined) {
      if (channel.hangingUp) return 'stop';
      services.log.warn({ channel: channel.name, timeoutMs }, 'StasisBroadcast: not claimed in time');
      channel.setSystemVariable('STASISSTATUS', 'TIMEOUT');
      return 'next';
    }
    // Claims made while the winner holds the channel still conflict; they stop once it lets go.
    try {
      // A winner whose resumable connection is away is waited for, as by Stasis().
      const entered = await services.stasis.enterWhenAvailable(channel, winner, stasisArgs, { fromDialplan: true });
      if (entered === 'hungup') return 'stop';
      if (entered === 'unavailable') {
        services.log.warn({ channel: channel.name, app: winner }, 'StasisBroadcast: the winning application is not registered');
        channel.setSystemVariable('STASISSTATUS', 'FAILED');
        return channel.hangingUp ? 'stop' : 'next';
      }
      // SUCCESS as stasis_app_exec returns, a hang-up included, before the hang-up destroys the channel.
      channel.once('stasis-left', () => channel.setSystemVariable('STASISSTATUS', 'SUCCESS'));
      const exit = await waitForStasisExit(channel);
      return exit === 'hungup' ? 'stop' : 'jump';
    } finally {
      broadcasts.finish(channel);
    }
  },
};
