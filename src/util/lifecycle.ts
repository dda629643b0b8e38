// One verb for ending things. Every object of the core that a call can leave behind — a channel,
// a bridge, a playback, a live recording — ends through `end()`, and every collection of them
// through `endAll()`. `end()` does what the resource's own ARI "end" operation does with its
// default arguments (hang up with normal clearing, destroy, stop, stop and keep the file), may be
// called any number of times (only the first counts) and announces the end once, through the
// object's own event (ChannelDestroyed, BridgeDestroyed, PlaybackFinished, RecordingFinished).
// The richer verbs (`hangup(cause)`, `finish(state, reason)`) stay for callers that need a
// particular cause or outcome; teardown code only ever needs `end()`.

/** An object of the core that can be ended. */
export interface Endable {
  end(): void;
}

/** A collection of core objects that ends all it holds (shutdown, unload). */
export interface EndableCollection {
  endAll(): void;
}
