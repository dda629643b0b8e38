// The address lookup of the media sockets (the `lookup` option of dgram.createSocket). Node's
// default runs every send() through dns.lookup, which answers an IP address on the next tick: the
// datagram then leaves after the caller has returned, read from its buffer only then, with a
// deferred call, its closure and a validation per packet. Media is sent to addresses (the SDP's,
// or where the far end's packets came from), so a literal address is answered at once and send()
// hands the datagram to libuv before it returns (libuv tries a synchronous sendmsg first, and
// queues the buffer only when the socket's buffer is full). Anything else still goes to DNS.
import dns from 'node:dns';
import net from 'node:net';

/** The callback of a dgram lookup. */
type LookupCallback = (error: NodeJS.ErrnoException | null, address: string, family: number) => void;

/**
 * A lookup for one socket, answering a literal address as dns.lookup does (the address and its own
 * family), only at once. It remembers the last literal: per packet, the usual case is the same
 * address string again, a comparison instead of a parse.
 */
export function literalAddressLookup(): (hostname: string, options: dns.LookupOneOptions | number, callback: LookupCallback) => void {
  let last = '';
  let lastFamily = 0;
  return (hostname, options, callback) => {
    if (hostname !== last) {
      const family = net.isIP(hostname);
      if (family === 0) {
        // dgram passes the socket's family as a number (4 for udp4, 6 for udp6).
        if (typeof options === 'number') dns.lookup(hostname, options, callback);
        else dns.lookup(hostname, options, callback);
        return;
      }
      last = hostname;
      lastFamily = family;
    }
    callback(null, hostname, lastFamily);
  };
}
