// Stasis(app[,args...]): hands the channel to an ARI application until it is continued or hung up.
// While the application's resumable connection is away, the channel waits for it (the reconnect
// grace period); if it does not come back in time the step fails as for an unregistered application.
// An application nobody has registered may be served per call (ARI outbound WebSockets with
// connection_type per_call_config): the connection is opened for this channel first.
import type { AppOutcome, DialplanApplication } from '../application.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { PbxServices } from '../application-services.ts';
import { waitForStasisExit } from '../../core/channels/wait.ts';

export const stasis: DialplanApplication = {
  name: 'Stasis',
  synopsis: 'Hands the channel to an ARI application',
  async execute(channel, [app, ...args], services) {
    channel.setSystemVariable('STASISSTATUS', '');
    const outcome = app ? await services.stasis.enterWhenAvailable(channel, app, args, { fromDialplan: true }) : 'unavailable';
    if (outcome === 'hungup') return 'stop';
    if (outcome === 'unavailable' && app && !channel.hangingUp && services.stasis.perCallApplications?.serves(app)) {
      return perCallStasis(channel, app, args, services);
    }
    // app_exec sets SUCCESS when the application returns, before a hang-up goes on to destroy the channel.
    if (outcome === 'entered') channel.once('stasis-left', () => channel.setSystemVariable('STASISSTATUS', 'SUCCESS'));
    if (outcome === 'unavailable') {
      services.log.warn({ channel: channel.name, app }, 'Stasis application is not registered; leaving the dialplan step');
      channel.setSystemVariable('STASISSTATUS', 'FAILED');
      return 'next';
    }
    const exit = await waitForStasisExit(channel);
    return exit === 'hungup' ? 'stop' : 'jump';
  },
};

/** Stasis() through a connection opened for this channel; its failure sets STASISSTATUS=FAILED and the dialplan goes on. */
async function perCallStasis(channel: Channel, app: string, args: string[], services: PbxServices): Promise<AppOutcome> {
  const session = await services.stasis.perCallApplications!.open(channel, app);
  if (!session || channel.hangingUp || (await services.stasis.enterWhenAvailable(channel, session.name, args, { fromDialplan: true })) !== 'entered') {
    session?.finish();
    if (channel.hangingUp) return 'stop';
    services.log.warn({ channel: channel.name, app }, 'per-call application connection failed; leaving the dialplan step');
    channel.setSystemVariable('STASISSTATUS', 'FAILED');
    return 'next';
  }
  // A connection lost for good mid-call takes the channel out of the application.
  session.onFailed(() => {
    if (channel.stasis?.app === session.name) services.stasis.leave(channel);
  });
  const exit = await waitForStasisExit(channel);
  session.finish();
  if (exit === 'hungup') {
    channel.setSystemVariable('STASISSTATUS', 'SUCCESS');
    return 'stop';
  }
  if (session.failed) {
    channel.setSystemVariable('STASISSTATUS', 'FAILED');
    return 'next';
  }
  channel.setSystemVariable('STASISSTATUS', 'SUCCESS');
  return 'jump';
}
