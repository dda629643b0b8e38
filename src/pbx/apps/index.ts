// Registers every built-in dialplan application with the executor (technologies add theirs through
// their context); with the built-in technologies' ones, the list is what the README's table of
// supported applications is generated from (scripts/apps-docs.ts).
import type { DialplanApplication } from '../application.ts';
import type { Pbx } from '../pbx.ts';
import { dbDel, dbDelTree } from './astdb.ts';
import { answer, hangup, noOp, set, wait } from './basic.ts';
import { execIf, gotoIfTime, type ApplicationLookup } from './conditional.ts';
import { dialApplication } from './dial.ts';
import { celGenUserEvent, noCdr, resetCdr } from './cdr.ts';
import { echo } from './echo.ts';
import { gosub, gosubIf, gosubReturn, stackPop } from './gosub.ts';
import { messageSend } from './message-send.ts';
import { goto, gotoIf } from './goto.ts';
import { busy, congestion, progress, ringing } from './indications.ts';
import { background, read, waitExten } from './menu.ts';
import { chanIsAvail, log, milliwatt, playTones, sendDtmfApp, stopPlayTones, userEvent, verbose } from './misc.ts';
import { mixMonitor, stopMixMonitor } from './mixmonitor.ts';
import { record } from './record.ts';
import { musicOnHold } from './music-on-hold.ts';
import { playback } from './playback.ts';
import { pickup, pickupChan } from './pickup.ts';
import { park, parkedCall } from './parking.ts';
import { sayAlphaApp, sayDigitsApp, sayNumberApp, sayUnixTime } from './say.ts';
import { stasis } from './stasis.ts';
import { stasisBroadcast } from './stasis-broadcast.ts';

/** Every application, in no particular order; `lookup` lets ExecIf run the others. */
export function dialplanApplications(lookup: ApplicationLookup): DialplanApplication[] {
  return [
    answer,
    hangup,
    noOp,
    wait,
    set,
    stasis,
    stasisBroadcast,
    goto,
    gotoIf,
    gotoIfTime,
    gosub,
    gosubIf,
    gosubReturn,
    stackPop,
    execIf(lookup),
    dialApplication,
    ringing,
    progress,
    busy,
    congestion,
    echo,
    playback,
    background,
    waitExten,
    read,
    sayDigitsApp,
    sayNumberApp,
    sayAlphaApp,
    sayUnixTime,
    musicOnHold,
    record,
    mixMonitor,
    stopMixMonitor,
    playTones,
    stopPlayTones,
    milliwatt,
    sendDtmfApp,
    userEvent,
    verbose,
    log,
    chanIsAvail,
    resetCdr,
    noCdr,
    celGenUserEvent,
    dbDel,
    dbDelTree,
    messageSend,
    pickup,
    pickupChan,
    park,
    parkedCall,
  ];
}

export function registerDialplanApplications(pbx: Pbx): void {
  for (const application of dialplanApplications((name) => pbx.application(name))) pbx.register(application);
}
