// Carrying out hangups that cause other hangups without recursion. Hanging one channel up often
// hangs others up (a Local partner, the legs a Dial() is ringing, and so on down a chain of any
// length); a hangup requested while another is being carried out is queued here, and the outermost
// request works the queue off, so a chain of thousands of channels uses no more stack than one.
// Kept apart from the channel so the order of the two stages can be read (and reasoned about) alone.

/** The two stages of one channel's hangup. Neither may throw: each reports its own failures. */
export interface HangupStages {
  /** Announce the hangup, let listeners release the channel, tell the far end. */
  release(): void;
  /** After the hangups the release requested: the channel is destroyed and forgotten. */
  destroy(): void;
  /**
   * Requested by another channel's release, this one is destroyed after that one (a Local `;2`
   * whose dialplan notices the hang-up only later, so Asterisk destroys `;1` first).
   */
  readonly destroyAfterRequester?: boolean;
}

/** One channel's place in the work list. */
interface HangupWork {
  readonly stages: HangupStages;
  /** Released (listeners and technology told); what is left is to destroy it. */
  released: boolean;
  /** Only its release is carried out here; its destruction has a place of its own further down. */
  releaseOnly?: boolean;
}

/** Hangups requested while a hangup is being carried out; undefined when none is. */
let hangupsRequested: HangupWork[] | undefined;

/** Whether a hang-up being carried out requests this one (a Local partner's), rather than the network or a client. */
export function requestedByAnotherHangup(): boolean {
  return hangupsRequested !== undefined;
}

/**
 * Carries a hangup out, or queues it when one is being carried out already. Every queued hangup
 * is finished before the outermost call returns; a channel is destroyed after the channels its own
 * release released, as a recursive order would have it, except those destroyed after their
 * requester (destroyAfterRequester).
 */
export function carryOutHangup(stages: HangupStages): void {
  const work: HangupWork = { stages, released: false };
  if (hangupsRequested !== undefined) {
    hangupsRequested.push(work);
    return;
  }
  runHangups(work);
}

/**
 * An explicit stack instead of recursion: each channel is released, then the hangups its release
 * requested are carried out (first requested first), then it is destroyed (hangups its destruction
 * requested follow).
 */
function runHangups(first: HangupWork): void {
  const stack: HangupWork[] = [first];
  const requested: HangupWork[] = [];
  hangupsRequested = requested;
  try {
    while (stack.length > 0) {
      const work = stack.pop()!;
      if (work.released) {
        work.stages.destroy();
      } else {
        work.stages.release();
        work.released = true;
        if (!work.releaseOnly) {
          // Destroyed after this one: placed below it, their releases still come before it.
          for (let i = requested.length - 1; i >= 0; i--) {
            if (requested[i].stages.destroyAfterRequester) stack.push({ stages: requested[i].stages, released: true });
          }
          stack.push(work);
        }
      }
      for (let i = requested.length - 1; i >= 0; i--) {
        const next = requested[i];
        if (next.stages.destroyAfterRequester && !work.releaseOnly) next.releaseOnly = true;
        stack.push(next);
      }
      requested.length = 0;
    }
  } finally {
    hangupsRequested = undefined;
  }
}
