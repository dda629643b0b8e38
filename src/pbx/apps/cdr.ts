// The dialplan's verbs on call records: ResetCDR and NoCDR (app_cdr) and CELGenUserEvent
// (app_celgenuserevent), acting on the core's CDR engine and channel event logging.
import type { DialplanApplication } from '../application.ts';

/** ResetCDR([options]): the channel's records start again now; option `v` keeps their CDR() variables. */
export const resetCdr: DialplanApplication = {
  name: 'ResetCDR',
  synopsis: "Restarts the channel's call records now (start, answer and end times; option v keeps CDR() variables)",
  execute(channel, [options = ''], services) {
    services.records?.cdr.reset(channel.id, options.includes('v'));
    return 'next';
  },
};

/** NoCDR(): no record of the channel is posted (Asterisk 22 keeps it as CDR_PROP(disable)=1). */
export const noCdr: DialplanApplication = {
  name: 'NoCDR',
  synopsis: "Posts none of the channel's call records (as CDR_PROP(disable)=1)",
  execute(channel, _args, services) {
    services.records?.cdr.setDisabled(channel.id, true);
    return 'next';
  },
};

/** Longest event name and extra text of CELGenUserEvent (Asterisk's fields are bounded too). */
const MAX_USER_EVENT_TEXT = 1024;

/** CELGenUserEvent(name[,extra]): a USER_DEFINED channel event (kept when cel.conf's events include it). */
export const celGenUserEvent: DialplanApplication = {
  name: 'CELGenUserEvent',
  synopsis: 'Raises a USER_DEFINED channel event log entry with a name and extra text',
  execute(channel, [name = '', ...rest], services) {
    if (name.trim() === '') {
      services.log.warn('CELGenUserEvent requires an argument (name[,extra])');
      return 'next';
    }
    services.records?.userEvent(channel.snapshot(), name.slice(0, MAX_USER_EVENT_TEXT), rest.join(',').slice(0, MAX_USER_EVENT_TEXT));
    return 'next';
  },
};
