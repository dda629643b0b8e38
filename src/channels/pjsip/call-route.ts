// Where a SIP call's signalling runs: the transport, listener and TCP/TLS connection its INVITE came
// or went on, another cluster member's connection when the phone is reached through it, and our
// Contact over all that. Kept apart from call.ts, which decides what the call's messages mean: this
// is only where they go and how we are named there (call-dialog-requests.ts sends by it).
import { isForeignFlow, type ForeignFlow } from '../../sip/foreign-flow.ts';
import type { Destination, TcpConnection } from '../../sip/transport.ts';
import { contactUri, isSipsUri, nameAddr } from './addresses.ts';
import type { CallEnvironment, Side } from './call-types.ts';
import type { OutboundInvite } from './outbound-invite.ts';

export class CallRoute {
  constructor(
    private readonly services: Pick<CallEnvironment, 'signallingHost' | 'signallingPort' | 'portOf'>,
    private readonly side: Side,
    private readonly endpointId: string,
    /** Outbound: our INVITE, whose transaction holds the connection it went on. */
    private readonly invite: OutboundInvite | undefined,
  ) {}

  /** Our Contact over the call's transport, at the port of the listener it runs on (addresses.ts contactUri). */
  contact(): string {
    const [transport, side] = [this.transport, this.side];
    const sips = isSipsUri(side.kind === 'inbound' ? side.invite.uri : side.target);
    // Over another server's connection the phone sees that server only (foreign-flow.ts).
    const flow = this.relayedFlow;
    if (flow) return nameAddr(contactUri(this.endpointId, flow.advertised.host, flow.advertised.port, transport, sips));
    const port = transport === 'UDP' ? undefined : this.services.portOf?.(transport, side.kind === 'inbound' ? side.tx.source.listener : side.destination.listener);
    return nameAddr(contactUri(this.endpointId, this.services.signallingHost, port ?? this.services.signallingPort, transport, sips));
  }

  /** The other server's connection this call runs over (a phone registered through another cluster member), if any. */
  get relayedFlow(): ForeignFlow | undefined {
    const connection = this.side.kind === 'outbound' ? this.side.destination.connection : undefined;
    return isForeignFlow(connection) ? connection : undefined;
  }

  /** The listener the call runs on, if named. */
  get listener(): string | undefined {
    return this.side.kind === 'inbound' ? this.side.tx.source.listener : this.side.destination.listener;
  }

  /** The TCP/TLS connection the INVITE came or went on, if any. */
  get connection(): TcpConnection | undefined {
    return this.side.kind === 'inbound' ? this.side.tx.source.connection : this.invite?.transaction?.connection;
  }

  /** The transport the INVITE came or went on. */
  get transport(): Destination['transport'] {
    return this.side.kind === 'outbound' ? this.side.destination.transport : this.side.tx.source.transport;
  }
}
