// Applications that exist only for one call: Stasis(app) for an application nobody has registered
// asks the provider (ARI's per-call outbound WebSockets) to bring one up for the channel.
import type { Channel } from './channels/channel.ts';

/** An application brought up for one channel. */
export interface PerCallApplication {
  /** The registered (ephemeral) application name the channel enters. */
  readonly name: string;
  /** True once the connection is lost for good: the channel must leave the application. */
  readonly failed: boolean;
  /** Called when the connection is lost for good while the channel is in the application. */
  onFailed(listener: () => void): void;
  /** The channel has left the application: finish the trailing events and close. */
  finish(): void;
}

export interface PerCallApplications {
  /** True when a per-call configuration serves `app`. */
  serves(app: string): boolean;
  /** Brings the application up for `channel`; resolves null when it cannot (connection failed). */
  open(channel: Channel, app: string): Promise<PerCallApplication | null>;
}
