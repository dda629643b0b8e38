// Checks of setting values (no control characters, host:port, bind address, CORS origin), each
// returning the problem or null as the schema's `check` expects, and the loopback test the
// password and metrics rules use.
import net from 'node:net';

export const noControl = (s: string): string | null => (/[\x00-\x1f\x7f]/.test(s) ? 'must not contain control characters' : null);

export function checkHostPort(s: string): string | null {
  const match = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(s);
  if (!match) return `must be host:port (the port is required), got '${s}'`;
  const port = Number(match[2]);
  return port < 1 || port > 65535 ? `port must be 1–65535, got ${port}` : null;
}

export function checkBind(s: string): string | null {
  if (s === '') return 'must not be empty';
  if (s.startsWith('[')) return 'write IPv6 addresses without brackets, e.g. ::1';
  if (net.isIP(s)) return null;
  if (/^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/.test(s)) return null;
  return `must be an IP address or host name, got '${s}'`;
}

export function checkOrigin(s: string): string | null {
  if (s === '*') return null;
  if (/^[a-z][a-z0-9+.-]*:\/\/[^\s/?#]+$/i.test(s)) return null;
  return `must be * or an origin scheme://host[:port] with no path or trailing slash, got '${s}'`;
}

/** True for 127.0.0.0/8, ::1 (any spelling, incl. IPv4-mapped 127.x) and localhost. */
export function isLoopback(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (net.isIPv4(h)) return h.split('.')[0] === '127';
  if (net.isIPv6(h)) {
    let canonical: string;
    try {
      canonical = new URL(`http://[${h}]/`).hostname.slice(1, -1);
    } catch {
      return false;
    }
    return canonical === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(canonical);
  }
  return false;
}
