// A connection to a peer that another server holds (RFC 5626's "flow" through an edge proxy): a
// phone registered over TCP, TLS or WebSocket with cluster member A is reached from member B only
// through A's connection. To B's transaction layer it is a connection like any other (responses
// and in-dialog requests go back over it, a close fails what is bound to it); what is written on
// it is handed to A, which writes it on the phone's connection. The phone must see one peer on its
// connection, so Via and Contact name A's address on it (`advertised`), not B's.
import type { SipMessage } from './message.ts';
import type { TcpConnection } from './transport.ts';

export interface ForeignFlow extends TcpConnection {
  readonly foreign: true;
  /** Where the phone knows the holder on this connection: the host and port of Via and Contact. */
  readonly advertised: { readonly host: string; readonly port: number };
  /** Hands a message to the holder; rejects when it cannot be written (the holder refused it, or the flow is closed). */
  write(message: SipMessage): Promise<void>;
  /** The dialog using the flow ended: the holder may forget it. */
  release(): void;
}

export function isForeignFlow(connection: TcpConnection | undefined): connection is ForeignFlow {
  return connection !== undefined && (connection as Partial<ForeignFlow>).foreign === true;
}
