// What the playback engine keeps about one live playback besides the playback itself: whether it
// is reported, the queue it waits in, who hears of it, and who waits for its end. One object per
// playback, so that forgetting a finished playback is dropping one entry rather than clearing a
// map per fact.
import type { Applications, EventScope } from '../applications.ts';
import type { Bridge } from '../bridges/bridge.ts';
import type { Playback, PlaybackState } from './playback.ts';
import type { PlaybackQueue } from './queue.ts';

export class PlaybackEntry {
  /** The queue of the playback's target; set once it has been queued. */
  queue: PlaybackQueue | undefined;
  /** For a bridge playback: the bridge, whose subscribers may be gone by the time it ends. */
  bridge: Bridge | undefined;
  /** For a bridge playback: the applications that heard of it while the bridge lived. */
  private audience: string[] = [];
  private waiters: ((state: PlaybackState) => void)[] = [];

  constructor(
    readonly playback: Playback,
    /** Not an ARI playback (the dialplan's): raises no events and is not listed. */
    readonly internal: boolean,
    /** The subscribers of the playback's channel or bridge. */
    private readonly scope: EventScope,
  ) {}

  /**
   * Who hears of the playback now: subscribers of its channel, or of its bridge. A destroyed bridge
   * has no subscribers left, so a bridge playback also goes to the applications that were
   * subscribed when it was last reported (they hear how it ended).
   */
  eventScope(applications: Applications): EventScope {
    if (!this.bridge) return this.scope;
    if (!this.bridge.destroyed) {
      this.audience = applications
        .list()
        .filter((app) => (app.active || app.held) && app.wants(this.scope))
        .map((app) => app.name);
    }
    return { ...this.scope, applications: this.audience };
  }

  /** Resolves with the final state once the playback has finished. */
  whenFinished(): Promise<PlaybackState> {
    if (this.playback.finished) return Promise.resolve(this.playback.state);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The playback finished: everyone waiting for it hears its final state. */
  settle(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve(this.playback.state);
  }
}
