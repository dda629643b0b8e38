// Where an external media server is and where to reach it from: `host:port` parsing, name
// resolution, and the local address of the class of `http.bind` (loopback by default, the
// wildcard when the interface listens everywhere, else that very address).
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { InvalidError } from '../../core/errors.ts';
import { parseHostPort } from '../../util/host-port.ts';

export { parseHostPort };


export const isLoopbackAddress = (address: string): boolean =>
  address === '::1' || address.startsWith('127.') || address.toLowerCase().startsWith('::ffff:127.');

export const isWildcardAddress = (address: string): boolean => address === '0.0.0.0' || address === '::';

async function resolveRemote(host: string): Promise<{ address: string; family: 4 | 6 }> {
  const literal = net.isIP(host);
  if (literal) return { address: host, family: literal as 4 | 6 };
  try {
    const found = await lookup(host);
    return { address: found.address, family: found.family === 6 ? 6 : 4 };
  } catch {
    throw new InvalidError(`external_host: cannot resolve ${host}`);
  }
}

/** Where a socket binds: the class of http.bind (loopback, wildcard or that address) in the remote's family. */
async function bindAddressFor(httpBind: string, family: 4 | 6): Promise<string> {
  const bind = httpBind.trim();
  if (bind === '' || bind === 'localhost' || isLoopbackAddress(bind)) return family === 4 ? '127.0.0.1' : '::1';
  if (isWildcardAddress(bind)) return family === 4 ? '0.0.0.0' : '::';
  let address = bind;
  if (!net.isIP(bind)) {
    try {
      address = (await lookup(bind, { family })).address;
    } catch {
      throw new InvalidError(`external_host: no IPv${family} address to send from (http.bind is ${httpBind})`);
    }
  }
  if (net.isIP(address) !== family) throw new InvalidError(`external_host: an IPv${family} host cannot be reached from ${httpBind} (http.bind)`);
  return address;
}

export interface ExternalTarget {
  /** The remote's address (resolved) and port. */
  readonly address: string;
  readonly port: number;
  readonly family: 4 | 6;
  /** The local address to bind; a wildcard when the interface listens everywhere. */
  readonly bindAddress: string;
}

/**
 * Resolves `host:port` and chooses the local address to reach it from. InvalidError for a
 * malformed or unresolvable host, or one the bind address cannot reach (a loopback-bound server
 * talks to loopback hosts only); `what` names the media in that message ("RTP is sent").
 */
export async function resolveTarget(externalHost: string, httpBind: string, what: string): Promise<ExternalTarget> {
  const target = parseHostPort(externalHost);
  if (!target) throw new InvalidError('external_host must be <host>:<port>');
  const remote = await resolveRemote(target.host);
  const bindAddress = await bindAddressFor(httpBind, remote.family);
  if (isLoopbackAddress(bindAddress) && !isLoopbackAddress(remote.address)) {
    throw new InvalidError(`external_host ${externalHost} cannot be reached: ${what} from the loopback address, as the interface listens on ${httpBind} (http.bind)`);
  }
  return { address: remote.address, port: target.port, family: remote.family, bindAddress };
}
