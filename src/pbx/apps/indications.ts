// Call-progress indications: Ringing(), Progress(), Busy([timeout]) and Congestion([timeout]).
// The indication goes to the channel's technology, which carries it to the far end (a Local `;2`
// half hands it to its `;1`, so whoever dialed `;1` sees the call ringing, busy, ...).
import { CAUSE } from '../../core/channels/causes.ts';
import type { Channel } from '../../core/channels/channel.ts';
import type { Indication } from '../../core/channels/technology.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';
import { waitOnChannel } from '../../core/channels/wait.ts';

/** An application that only passes an indication on and goes to the next priority. */
function progressIndication(name: string, synopsis: string, indication: Indication): DialplanApplication {
  return {
    name,
    synopsis,
    execute(channel) {
      channel.indicate(indication);
      return 'next';
    },
  };
}

export const ringing = progressIndication('Ringing', 'Indicates ringing to the caller', 'ringing');
export const progress = progressIndication('Progress', 'Indicates call progress (early media) to the caller', 'progress');

/** Resolves when the channel hangs up, or after `timeout` seconds when one is given. */
async function waitForHangup(channel: Channel, timeout: string | undefined): Promise<void> {
  const seconds = Number.parseFloat(timeout ?? '');
  if (Number.isFinite(seconds) && seconds >= 0) {
    await waitOnChannel(channel, seconds * 1000);
    return;
  }
  if (channel.hangingUp) return;
  await new Promise<void>((resolve) => channel.once('hangup', () => resolve()));
}

/**
 * As Asterisk's indicate_busy/indicate_congestion: a channel not yet answered becomes Busy and
 * will end with the matching cause; an answered one only hears the indication. Then the
 * application waits for the caller to hang up (or the timeout) and the call ends.
 */
function failureIndication(name: string, indication: Indication, cause: number): DialplanApplication {
  return {
    name,
    synopsis: `Indicates ${indication} to the caller, then hangs up (after an optional timeout)`,
    async execute(channel, [timeout]): Promise<AppOutcome> {
      const answered = channel.answered;
      // The state changes before the far end learns of it, as Asterisk's queued indication does.
      if (!answered) channel.setState('Busy');
      channel.indicate(indication);
      await waitForHangup(channel, timeout);
      if (!channel.hangingUp) channel.hangup(answered ? CAUSE.normal : cause);
      return 'stop';
    },
  };
}

export const busy = failureIndication('Busy', 'busy', CAUSE.busy);
export const congestion = failureIndication('Congestion', 'congestion', CAUSE.congestion);
