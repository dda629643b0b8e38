// The channel technologies of a Patchbay server, in the order they start (and the reverse of the
// order they stop). Each is a module (`chan_*.so`) that the server hands to the core; adding a
// technology is one more line here. Technologies import the core's seam (src/core/channels/
// technology.ts) and the media library (src/media/); the core never imports this folder.
import type { ChannelTechnology } from '../core/channels/technology.ts';
import { AudioSocketTechnology } from './external-media/audiosocket.ts';
import { UnicastRtpTechnology } from './external-media/unicast-rtp.ts';
import { LocalTechnology } from './local/technology.ts';
import { PjsipTechnology } from './pjsip/technology.ts';
import { WebSocketTechnology } from './websocket/technology.ts';

/** One server's technologies (fresh instances: a technology keeps the state of its channels). */
export interface BuiltinTechnologies {
  readonly local: LocalTechnology;
  /** UnicastRTP: ARI externalMedia over rtp/udp. */
  readonly rtp: UnicastRtpTechnology;
  /** AudioSocket: ARI externalMedia over audiosocket/tcp. */
  readonly audioSocket: AudioSocketTechnology;
  /** PJSIP (alias SIP): SIP phones and trunks. */
  readonly pjsip: PjsipTechnology;
  /** WebSocket: media over WebSocket (chan_websocket, ARI externalMedia over websocket). */
  readonly webSocket: WebSocketTechnology;
  /** All of them, in start order. */
  readonly list: readonly ChannelTechnology[];
}

export function createChannelTechnologies(): BuiltinTechnologies {
  const local = new LocalTechnology();
  const rtp = new UnicastRtpTechnology();
  const audioSocket = new AudioSocketTechnology();
  const pjsip = new PjsipTechnology();
  const webSocket = new WebSocketTechnology();
  return { local, rtp, audioSocket, pjsip, webSocket, list: [local, rtp, audioSocket, pjsip, webSocket] };
}
