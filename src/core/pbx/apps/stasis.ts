// Stasis(app[,args...]): hands the channel to an ARI application until it is continued or hung up.
// While the application's resumable connection is away, the channel waits for it (the reconnect
// grace period); if it does not come back in time the step fails as for an unregistered application.
import type { DialplanApplication } from '../application.ts';
import { waitForStasisExit } from '../../channels/wait.ts';

export const stasis: DialplanApplication = {
  name: 'Stasis',
  synopsis: 'Hands the channel to an ARI application',
  async execute(channel, [app, ...args], services) {
    const outcome = app ? await services.stasis.enterWhenAvailable(channel, app, args, { fromDialplan: true }) : 'unavailable';
    if (outcome === 'hungup') return 'stop';
    if (outcome === 'unavailable') {
      services.log.warn({ channel: channel.name, app }, 'Stasis application is not registered; leaving the dialplan step');
      channel.setVariable('STASISSTATUS', 'FAILED');
      return 'next';
    }
    const exit = await waitForStasisExit(channel);
    if (exit === 'hungup') return 'stop';
    channel.setVariable('STASISSTATUS', 'SUCCESS');
    return 'jump';
  },
};
