// What a technology tells the endpoint registry (endpoints.ts) about its endpoints. Its own file
// so that the technology contract (channels/technology.ts) can name it without importing the
// registry, which watches the channel table and would close an import circle through it.

export const ENDPOINT_STATES = ['unknown', 'offline', 'online'] as const;
export type EndpointState = (typeof ENDPOINT_STATES)[number];

/** What a technology knows of one of its endpoints. */
export interface EndpointInfo {
  readonly resource: string;
  readonly state: EndpointState;
  readonly maxChannels?: number;
}

/** A change a provider reports. `previous` is the state before the change (absent for `added`). */
export interface EndpointChange {
  readonly kind: 'added' | 'removed' | 'state';
  readonly resource: string;
  readonly previous?: EndpointState;
}

export type EndpointChangeListener = (change: EndpointChange) => void;

/** A technology's set of endpoints. */
export interface EndpointProvider {
  /** The technology as written in endpoint ids and dial strings (`Phone`). */
  readonly technology: string;
  list(): EndpointInfo[];
  get(resource: string): EndpointInfo | undefined;
  /** Reports endpoints appearing, disappearing and changing state; returns a function that stops it. */
  watch(listener: EndpointChangeListener): () => void;
  /** Sets an endpoint's state (a registration came or went), for providers whose states are set from outside. */
  setState?(resource: string, state: EndpointState): void;
  /**
   * How many channels in use make the endpoint's device BUSY whatever their states (chan_pjsip's
   * device_state_busy_at); 0 or absent: never.
   */
  busyAt?(resource: string): number;
}
