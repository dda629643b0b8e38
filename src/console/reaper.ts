// The web console's leftovers when its browser dies. A listen-in is built with public ARI (a snoop
// channel and a media channel in the console's own application, and a `console-listen-*` bridge
// joining them); a page that closes deletes them, but a browser that crashes or loses the network
// cannot. Once a console application (`patchbay-console-*`) has had no events connection for a
// grace period — long enough for a page that only lost its connection to come back — its channels
// are hung up and the listen bridges left empty are destroyed, so nothing the console made outlives it.
import type { Core } from '../control/core.ts';

/** The console's application names (src/console/public/state.js). */
export const CONSOLE_APP_PREFIX = 'patchbay-console-';
/** The bridges the console makes to listen to a channel (src/console/public/listen.js). */
export const CONSOLE_BRIDGE_PREFIX = 'console-listen-';

export interface ConsoleReaperOptions {
  /** How long a console application may be without a connection before its objects go. */
  readonly graceMs?: number;
  /** How often applications are looked at. */
  readonly intervalMs?: number;
  /** Told what was reaped (a log line). */
  readonly onReaped?: (app: string, channels: number, bridges: number) => void;
}

export class ConsoleReaper {
  readonly #timer: NodeJS.Timeout;
  readonly #graceMs: number;

  constructor(
    private readonly core: Core,
    private readonly options: ConsoleReaperOptions = {},
  ) {
    this.#graceMs = options.graceMs ?? 30_000;
    this.#timer = setInterval(() => this.sweep(), options.intervalMs ?? 5_000);
    // Housekeeping never keeps the process alive.
    this.#timer.unref();
  }

  /** Reaps what belongs to console applications disconnected for longer than the grace period. */
  sweep(now: number = Date.now()): void {
    const gone = new Set<string>();
    for (const app of this.core.applications.list()) {
      if (!app.name.startsWith(CONSOLE_APP_PREFIX) || app.active) continue;
      if (app.disconnectedAt && now - app.disconnectedAt.getTime() >= this.#graceMs) gone.add(app.name);
    }
    if (gone.size === 0) return;
    const channels = new Map<string, number>();
    const reaped = new Set<string>();
    for (const channel of this.core.channels.list()) {
      const app = channel.stasis?.app;
      if (app === undefined || !gone.has(app) || channel.hangingUp) continue;
      reaped.add(channel.id);
      channels.set(app, (channels.get(app) ?? 0) + 1);
    }
    // A listen bridge holds only the console's two channels: it goes with them. A bridge the
    // console only joined (listening to a bridge) has other members and stays, as does one a live
    // console is still building (none of its members is being reaped).
    const doomed = this.core.bridges.list().filter((bridge) => {
      if (!bridge.name.startsWith(CONSOLE_BRIDGE_PREFIX)) return false;
      const ids = bridge.channelIds();
      return ids.some((id) => reaped.has(id)) && ids.every((id) => reaped.has(id) || this.core.channels.get(id) === undefined);
    });
    for (const id of reaped) this.core.channels.get(id)?.end();
    for (const bridge of doomed) bridge.destroy();
    for (const app of gone) if (channels.has(app)) this.options.onReaped?.(app, channels.get(app)!, doomed.length);
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
