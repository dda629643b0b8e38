// An out-of-call text message and the transport a technology carries such messages on. Its own
// file so that the technology contract (channels/technology.ts) can name them without importing
// the router (messages.ts), which reaches the channel table through the endpoint registry and
// would close an import circle through it.

/** The ARI TextMessage model. */
export interface TextMessage {
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly variables: Readonly<Record<string, string>>;
}

/** Where a message goes: a registered technology (canonical spelling) and the rest of `to`. */
export interface MessageDestination {
  readonly technology: string;
  /** The endpoint part of `to` (before any `/`: `phone:alice/sip:alice@host` → `alice`). */
  readonly resource: string;
  /** Everything after `tech:` (`alice/sip:alice@host`), for transports that address URIs. */
  readonly address: string;
}

/** A request that an endpoint transfer itself elsewhere (ARI `refer`, a SIP REFER out of a call). */
export interface ReferRequest {
  readonly to: string;
  readonly from: string;
  /** A URI, or `tech:endpoint` of this server. */
  readonly referTo: string;
  /** refer_to names an endpoint of this server: the far end is sent to this server for it. */
  readonly toSelf: boolean;
  /** Extra headers (`display_name` is the Refer-To display name). */
  readonly variables: Readonly<Record<string, string>>;
}

/** Carries a technology's messages to their destination. Throws NotFoundError when it cannot. */
export interface MessageTransport {
  send(message: TextMessage, destination: MessageDestination): void;
  /** Sends a REFER; NotFoundError for an unknown endpoint. Technologies without it cannot refer. */
  refer?(request: ReferRequest, destination: MessageDestination): void;
}
