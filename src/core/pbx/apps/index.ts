// Registers every dialplan application with the executor.
import type { Pbx } from '../pbx.ts';
import { answer, hangup, noOp, set, wait } from './basic.ts';
import { stasis } from './stasis.ts';

export function registerDialplanApplications(pbx: Pbx): void {
  for (const application of [answer, hangup, noOp, wait, set, stasis]) pbx.register(application);
}
