// Registers every dialplan application with the executor.
import type { Pbx } from '../pbx.ts';
import { answer, hangup, noOp, set, wait } from './basic.ts';
import { dialApplication } from './dial.ts';
import { echo } from './echo.ts';
import { goto, gotoIf } from './goto.ts';
import { busy, congestion, progress, ringing } from './indications.ts';
import { record } from './record.ts';
import { musicOnHold } from './music-on-hold.ts';
import { playback } from './playback.ts';
import { stasis } from './stasis.ts';
import { stasisBroadcast } from './stasis-broadcast.ts';

export function registerDialplanApplications(pbx: Pbx): void {
  for (const application of [
    answer,
    hangup,
    noOp,
    wait,
    set,
    stasis,
    stasisBroadcast,
    goto,
    gotoIf,
    dialApplication,
    ringing,
    progress,
    busy,
    congestion,
    echo,
    playback,
    musicOnHold,
    record,
  ]) {
    pbx.register(application);
  }
}
