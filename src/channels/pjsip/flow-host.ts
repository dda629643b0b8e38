// The technology's side of dialogs over another server's connection (flow-relay.ts): as the
// holder of a phone's connection it finds that connection and writes on it; as the dialling side
// it takes what the holder hands back as received over the flow, and fails what used a flow that
// closed. The relay itself (the cluster's) carries the messages between the two.
import type { ForeignFlow } from '../../sip/foreign-flow.ts';
import type { SipMessage } from '../../sip/message.ts';
import type { BindingSource } from '../../sip/registrar.ts';
import type { SipTrace } from '../../sip/trace.ts';
import type { SipTransportSet } from '../../sip/transport-set.ts';
import type { Destination, Source, TcpConnection, TransportProtocol } from '../../sip/transport.ts';
import type { FlowHost } from './flow-relay.ts';
import type { PjsipRuntime } from './runtime.ts';

const PROTOCOLS: Readonly<Record<BindingSource['transport'], TransportProtocol>> = { udp: 'UDP', tcp: 'TCP', tls: 'TLS', ws: 'WS', wss: 'WSS' };

export class TechnologyFlowHost implements FlowHost {
  constructor(
    private readonly runtime: PjsipRuntime,
    private readonly transport: () => SipTransportSet | undefined,
    private readonly trace: SipTrace,
  ) {}

  connectionOf(contactUri: string): (Destination & { connection: TcpConnection }) | undefined {
    const binding = this.runtime.registrar.findByUri(contactUri);
    if (!binding || binding.source.transport === 'udp') return undefined;
    const { address: host, port, listener } = binding.source;
    const protocol = PROTOCOLS[binding.source.transport];
    const connection = this.transport()?.openConnection(protocol, host, port, listener);
    if (!connection) return undefined;
    return { transport: protocol, host, port, connection, ...(listener !== undefined ? { listener } : {}) };
  }

  async send(message: SipMessage, destination: Destination): Promise<unknown> {
    const layer = this.runtime.layer;
    if (!layer) throw new Error('SIP is not running');
    // Through the layer's sender: `sip trace` and the ladder see what is relayed, as what is sent.
    return layer.transport.send(message, destination);
  }

  /** As a call of this server's own over that listener writes its Contact (call.ts): the public host, the listener's port. */
  advertisedFor(source: BindingSource): { host: string; port: number } | undefined {
    if (source.transport === 'udp') return undefined;
    const port = this.transport()?.port(PROTOCOLS[source.transport], source.listener);
    return port === undefined ? undefined : { host: this.runtime.publicHost, port };
  }

  receive(message: SipMessage, source: Source): void {
    this.trace.received(message, source);
    this.runtime.layer?.receive(message, source);
  }

  flowClosed(flow: ForeignFlow): void {
    // Transactions bound to it fail (an INVITE not answered yet: the call fails, cause 27) …
    this.runtime.layer?.connectionClosed(flow);
    // … and an answered call ends as a single server's whose phone connection is gone.
    for (const call of [...this.runtime.calls.values()]) if (call.relayedFlow === flow) call.flowLost();
  }
}
