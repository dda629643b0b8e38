// `host:port` as ARI's external_host gives it; the interface layer checks it, technologies use it.
import net from 'node:net';

/** `host:port` or `[v6]:port`, port 1–65535; undefined when malformed. */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const match = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:[\]\s/]+):(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  const host = match[1];
  if (text.startsWith('[') && net.isIPv6(host) === false) return undefined;
  return { host, port };
}
