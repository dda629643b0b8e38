// What an RTP stream needs of its socket: a node:dgram socket has it, and so does a socket that
// secures the media on its way (WebRTC: ICE checks, DTLS and SRTP beneath plain RTP, see
// ../webrtc/secure-media-socket.ts). The stream reads and writes plain RTP either way.
import type { RemoteInfo } from 'node:dgram';

export type MediaMessageListener = (message: Buffer, rinfo: RemoteInfo) => void;

export interface MediaSocket {
  address(): { readonly port: number };
  on(event: 'message', listener: MediaMessageListener): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'message', listener: MediaMessageListener): unknown;
  send(message: Buffer, offset: number, length: number, port: number, address: string, callback?: (error: Error | null) => void): void;
  close(callback?: () => void): unknown;
}
