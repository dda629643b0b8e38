// Whether the parties of a mix hear each other: each far end (an RtpToneEnd sending its own tone)
// must hear every other party's tone loud in its last second, and its own at most faintly (the mix
// takes each party's own audio out of what it sends back). Shared by the media-worker mix suites.
import type { RtpToneEnd } from './rtp-tone.ts';
import { tonePower } from './tone-power.ts';

/** A party's far end and the tone it sends. */
export interface TonePartyEnd {
  readonly end: RtpToneEnd;
  readonly hz: number;
}

/** Over the last second: `listener` hears every tone of `others` loud, and its own at most faintly. */
export function hearsOthers(listener: TonePartyEnd, others: readonly { readonly hz: number }[]): boolean {
  const now = Date.now();
  const samples = listener.end.samples(now - 1000, now);
  if (samples.length < 30 * 160) return false;
  const own = tonePower(samples, listener.hz, 8000);
  return others.every((other) => {
    const power = tonePower(samples, other.hz, 8000);
    return power > 1e6 && power > 20 * own;
  });
}

/** Every party hears all the others (hearsOthers), now. */
export function eachHearsTheRest(parties: readonly TonePartyEnd[]): boolean {
  return parties.every((party) => hearsOthers(party, parties.filter((other) => other !== party)));
}
