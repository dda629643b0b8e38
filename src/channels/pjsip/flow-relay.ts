// Dialogs over another server's connection (docs/cluster.md, "Registrations"). A phone registered
// over TCP, TLS or WebSocket through cluster member A can only be reached over its connection,
// which A holds; member B calls it through A: B's transaction layer writes on a ForeignFlow whose
// messages A writes on the phone's connection, and what the phone sends back in that dialog A
// hands to B, which takes it as received over that connection. The technology knows nothing of
// NATS: it declares this hook (the cluster fills it) and gives the relay a FlowHost to work with.
import type { SipMessage } from '../../sip/message.ts';
import type { ForeignFlow } from '../../sip/foreign-flow.ts';
import type { Destination, Source, TcpConnection } from '../../sip/transport.ts';
import type { BindingSource } from '../../sip/registrar.ts';
import type { SharedContact } from './contact-directory.ts';

/** What the technology offers the relay, on both sides. */
export interface FlowHost {
  // ---- the holder's side (A)
  /**
   * Where a registered contact of this server is reached over its connection: the binding's open
   * connection (never a new one), as a destination; undefined when the contact is not bound here,
   * was registered over UDP, or its connection is closed.
   */
  connectionOf(contactUri: string): Destination & { connection: TcpConnection } | undefined;
  /** Writes a message on one of this server's connections (through `sip trace`). */
  send(message: SipMessage, destination: Destination): Promise<unknown>;
  /** The address this server shows on connections of a binding's listener (its Via and Contact there). */
  advertisedFor(source: BindingSource): { host: string; port: number } | undefined;
  // ---- the dialling side (B)
  /** A message the holder received for a dialog of this server: taken as if it arrived over `source.connection`. */
  receive(message: SipMessage, source: Source): void;
  /** A flow of this server's closed (the phone's connection, or the holder, went away): what used it fails. */
  flowClosed(flow: ForeignFlow): void;
}

export interface FlowRelay {
  /** Given once, when the technology takes the relay. */
  attach(host: FlowHost): void;
  /** The holder's side: a message on one of this server's connections; true when it belongs to another server's dialog (and went there). */
  divert(message: SipMessage, source: Source): boolean;
  /** The holder's side: a connection of this server closed. */
  connectionClosed(connection: TcpConnection): void;
  /** The dialling side: a new flow to a contact another server holds, or why there is none. */
  flowTo(contact: SharedContact): { readonly flow: ForeignFlow } | { readonly refused: string };
}
