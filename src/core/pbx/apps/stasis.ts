// Stasis(app[,args...]): hands the channel to an ARI application until it is continued or hung up.
import type { DialplanApplication } from '../application.ts';
import { waitForStasisExit } from '../../channels/wait.ts';

export const stasis: DialplanApplication = {
  name: 'Stasis',
  synopsis: 'Hands the channel to an ARI application',
  async execute(channel, [app, ...args], services) {
    if (!app || !services.stasis.enter(channel, app, args, { fromDialplan: true })) {
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
