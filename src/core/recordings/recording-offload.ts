// The recording fast path of one recording: while nothing but the recording needs the audio here,
// and the technology can write it by itself — a channel recording of a SIP call whose stream runs
// in a media worker, a bridge recording of a bridge mixed in the workers (the mixing worker writes
// the mix) — the recording's file is handed over — closed here, reopened for appending there —
// and the main thread does nothing per frame. The LiveRecording stays here with
// its events, controls and end; pause and mute reach the writer through the handle. The recording
// comes back:
//   - when something else needs the received audio here (a snoop, a second recording, talk
//     detection, a mute), or the bridge's worker mix stops (a member came or went, a playback…):
//     the technology stops writing at once and the frames reach the recording here again from the
//     next one; the ticks until the file is closed there are kept here and written first when it is
//     reopened, so the file has no gap;
//   - when the recording ends here (stop, cancel, a digit, the hang-up): it is taken back to be
//     closed, and the owner finishes once the file is closed there;
//   - when it ends there (maximum duration, silence, a failed write) or the place dies with it.
// A refusal (the stream is not in a worker, or busy) is not asked again until the channel's media
// path changes.
import type { OffloadedRecording, OffloadEnd, OffloadEnded, RecordingHandover, RecordingProgress } from '../../media/recording-writer.ts';

/** What a recording's source offers the fast path (sources.ts: a channel's, a bridge's). */
export interface OffloadTarget {
  /** The technology may write the recording now (nothing else needs the audio here). */
  readonly offloadable: boolean;
  /** Something here needs the audio now: a recording written there comes back. */
  readonly neededHere: boolean;
  /**
   * Whether the recording goes on here when the technology dies with it (a bridge outlives its
   * mixing worker; a channel does not: it hangs up with it).
   */
  readonly outlivesTechnology: boolean;
  /** Hands the recording to the technology; undefined when it cannot. */
  handOver(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined;
  /** Calls `listener` on every change that may make it offloadable or not. */
  watch(listener: () => void): void;
  unwatch(listener: () => void): void;
}

/** Ticks kept while a recording comes back (the worker answers within a tick or two): 5 s at most. */
const MAX_PENDING_TICKS = 250;

/** A tick the main thread saw while the file was still open elsewhere. */
export interface PendingTick {
  /** A copy of the frame received then; undefined when none came. */
  readonly samples: Int16Array | undefined;
  readonly paused: boolean;
  readonly muted: boolean;
}

/** What the offload needs of its LiveRecording. */
export interface OffloadOwner {
  readonly file: string;
  readonly formatName: string;
  readonly maxDurationSamples: number;
  readonly maxSilenceMs: number;
  readonly paused: boolean;
  readonly muted: boolean;
  readonly progress: RecordingProgress;
  /** Closes the file here for the hand-over; false when that failed (the owner fails the recording). */
  release(): boolean;
  /** The file is back: reopen it, go on from `progress`, and write the ticks kept meanwhile first. */
  resume(progress: RecordingProgress, pending: readonly PendingTick[]): void;
  /** The recording ended where it was written (or the place died with it); its file is closed. */
  endedThere(end: Exclude<OffloadEnd, 'taken-back'>, progress: RecordingProgress, reason: string | undefined): void;
  /** The recording was taken back to end (closing): its file is closed, the owner finishes now. */
  closed(progress: RecordingProgress): void;
}

/** Recordings handed to a technology since the process started, and taken back (tests and /metrics-style counts). */
export const recordingOffloadCounts = { handedOver: 0, takenBack: 0, endedThere: 0 };

export class RecordingOffload {
  #handed: OffloadedRecording | undefined;
  /** Taken back and not closed there yet: the ticks seen meanwhile. */
  #pending: PendingTick[] | undefined;
  /** Taken back to end: the owner finishes when the file is closed there. */
  #closing = false;
  /** The technology refused; asked again when the media path changes. */
  #refused = false;
  #listening = false;

  constructor(
    private readonly target: OffloadTarget,
    private readonly owner: OffloadOwner,
  ) {}

  /** The file is open elsewhere (written there, or being closed there): the owner writes nothing. */
  get away(): boolean {
    return this.#handed !== undefined;
  }

  /** Where the file is, written there or on its way back: its figures (samples, talking time) are the latest. */
  get elsewhere(): OffloadedRecording | undefined {
    return this.#handed;
  }

  /** Written elsewhere right now (not on its way back). */
  get writtenThere(): OffloadedRecording | undefined {
    return this.#pending === undefined ? this.#handed : undefined;
  }

  /** Called by the owner after each tick it wrote here: hands the file over when it can. */
  consider(): void {
    if (this.#handed || this.#refused || this.#closing) return;
    if (!this.#listening) {
      this.#listening = true;
      this.target.watch(this.#onPathChanged);
    }
    if (!this.target.offloadable) {
      this.#refused = true;
      return;
    }
    const owner = this.owner;
    let released = false;
    const handed = this.target.handOver(
      {
        file: owner.file,
        formatName: owner.formatName,
        maxDurationSamples: owner.maxDurationSamples,
        maxSilenceMs: owner.maxSilenceMs,
        get progress() {
          return owner.progress;
        },
        paused: owner.paused,
        muted: owner.muted,
        release: () => (released = owner.release()),
      },
      (end, progress, reason) => this.#ended(end, progress, reason),
    );
    if (!handed || !released) {
      this.#refused = true;
      return;
    }
    this.#handed = handed;
    recordingOffloadCounts.handedOver += 1;
  }

  /** Called by the owner on each tick while away: keeps the tick when the file is on its way back. */
  keep(received: Int16Array | undefined, paused: boolean, muted: boolean): void {
    // Taken back by the technology itself (the worker mix stopped): the frames are here again from now.
    if (!this.#pending && this.#handed?.returning) {
      this.#pending = [];
      recordingOffloadCounts.takenBack += 1;
    }
    const pending = this.#pending;
    if (!pending || this.#closing) return;
    if (pending.length >= MAX_PENDING_TICKS) pending.shift();
    pending.push({ samples: received ? Int16Array.from(received) : undefined, paused, muted });
  }

  pause(paused: boolean): void {
    this.writtenThere?.pause(paused);
  }

  mute(muted: boolean): void {
    this.writtenThere?.mute(muted);
  }

  /** The recording ends here: it is taken back to be closed; `closed` follows. False when it is not away (the owner closes it itself). */
  close(): boolean {
    this.#stopListening();
    if (!this.#handed) return false;
    this.#closing = true;
    this.#takeBack();
    return true;
  }

  #takeBack(): void {
    if (!this.#handed || this.#pending) return;
    this.#pending = [];
    recordingOffloadCounts.takenBack += 1;
    this.#handed.takeBack();
  }

  /** A listener, a hook, a mute, a generator came or went. */
  readonly #onPathChanged = (): void => {
    if (this.#handed) {
      if (this.target.neededHere) this.#takeBack();
      return;
    }
    this.#refused = false;
  };

  #ended(end: OffloadEnd, progress: RecordingProgress, reason: string | undefined): void {
    const pending = this.#pending ?? [];
    this.#handed = undefined;
    this.#pending = undefined;
    if (this.#closing) {
      this.owner.closed(progress);
      return;
    }
    if (end === 'taken-back' || (end === 'lost' && this.target.outlivesTechnology)) {
      this.owner.resume(progress, pending);
      return;
    }
    recordingOffloadCounts.endedThere += 1;
    this.#stopListening();
    this.owner.endedThere(end, progress, reason);
  }

  #stopListening(): void {
    if (!this.#listening) return;
    this.#listening = false;
    this.target.unwatch(this.#onPathChanged);
  }
}
