// A UDP socket bound on a free loopback port: the far end of a media test (a phone, a browser, a
// stranger), whose port the test then names in the SDP or the stream's parameters.
import dgram from 'node:dgram';

export async function loopbackSocket(): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return socket;
}
