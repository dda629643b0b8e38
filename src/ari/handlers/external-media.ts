// External media (ARI `externalMedia`) and RTP statistics (`rtpstatistics`). The parameter rules
// follow Asterisk's res/ari/resource_channels.c: websocket needs encapsulation none, rtp needs udp,
// audiosocket needs tcp, connection type server only with websocket (400 otherwise); of the
// combinations left, each is served by the channel technology that names it (rtp over udp:
// UnicastRTP, audiosocket over tcp: AudioSocket). Websocket is, as in Asterisk, an originate of
// `WebSocket/<INCOMING|client>[/<transport_data>]d(<direction>)` into the application (it enters
// once answered, i.e. once the media WebSocket is up), answered with the channel and all its
// variables, MEDIA_WEBSOCKET_CONNECTION_ID among them.
import { findChannel } from '../../control/channel-control.ts';
import { parseHostPort } from '../../util/host-port.ts';
import { CODEC_NAMES, isCodecName } from '../../media/codecs.ts';
import { originate, parseVariables } from '../../control/originate.ts';
import { AriError, defineHandlers, type RequestContext } from '../handler.ts';
import type { Model } from '../../spec/index.ts';

export const externalMediaHandlers = defineHandlers('channels', {
  externalMedia: async (params, { core }) => {
    const variables = parseVariables(params.variables);
    const { app, encapsulation, transport, connection_type: connectionType, direction } = params;
    if (!app) throw new AriError(400, 'app cannot be empty');
    if (transport === 'websocket' && encapsulation !== 'none') throw new AriError(400, "encapsulation must be 'none' for websocket transport");
    if (encapsulation === 'rtp' && transport !== 'udp') throw new AriError(400, 'Encapsulation rtp requires transport udp');
    if (encapsulation === 'audiosocket' && transport !== 'tcp') throw new AriError(400, 'Encapsulation audiosocket requires transport tcp');
    if (connectionType === 'server' && transport !== 'websocket') throw new AriError(400, 'Connection type server requires transport websocket');
    const externalHost = params.external_host ?? '';
    if (!externalHost && !(transport === 'websocket' && connectionType === 'server')) throw new AriError(400, 'external_host cannot be empty');
    // For websocket clients external_host names a connection; everything else connects to host:port.
    if (transport !== 'websocket' && !parseHostPort(externalHost)) throw new AriError(400, 'external_host must be <host>:<port>');
    if (!params.format) throw new AriError(400, 'format cannot be empty');
    if (!isCodecName(params.format)) {
      throw new AriError(400, `Unsupported format '${params.format}'; supported: ${CODEC_NAMES.join(', ')}`);
    }
    if (encapsulation === 'audiosocket' && !params.data) throw new AriError(400, 'data can not be empty');
    if (transport === 'websocket') return externalMediaWebSocket({ ...params, app, format: params.format }, core);
    const request = {
      app,
      // As in Asterisk, `data` is also the application's argument.
      appArgs: params.data || undefined,
      externalHost,
      format: params.format,
      direction,
      channelId: params.channelId || undefined,
      variables,
      data: params.data ?? '',
    };
    const technology = core.technologies.externalMedia(encapsulation, transport);
    if (technology) return (await technology.create(request)).snapshot() as Model<'Channel'>;
    throw new AriError(501, `Not implemented: externalMedia (${encapsulation}/${transport})`);
  },

  rtpstatistics: ({ channelId }, { core }) => {
    const channel = findChannel(core.channels, channelId);
    // Whatever the technology, a channel whose driver carries RTP has statistics.
    if (!channel.driver.rtpStatistics) throw new AriError(403, 'Unsupported channel type');
    const statistics = channel.driver.rtpStatistics();
    if (!statistics) throw new AriError(404, 'RTP info not found');
    // Asterisk writes the two scores as JSON integers (truncated), their spreads as reals.
    return { ...statistics, txmes: Math.trunc(statistics.txmes), rxmes: Math.trunc(statistics.rxmes), channel_uniqueid: channel.id } as Model<'RTPstat'>;
  },
});

/** The externalMedia request with transport websocket, checked up to the format. */
interface WebSocketMediaParams {
  readonly app: string;
  readonly connection_type?: string;
  readonly external_host?: string;
  readonly transport_data?: string;
  readonly direction?: string;
  readonly data?: string;
  readonly channelId?: string;
  readonly variables?: unknown;
  readonly format: string;
}

function externalMediaWebSocket(params: WebSocketMediaParams, core: RequestContext['core']): Model<'Channel'> {
  const server = params.connection_type === 'server';
  const externalHost = params.external_host ?? '';
  if (!server && !core.config.websocketClients.some((client) => client.name === externalHost)) {
    throw new AriError(400, 'external_host must be a valid websocket_client connection id.');
  }
  // Server mode always waits for the application: the id it connects with is made for the channel.
  const connection = server ? 'INCOMING' : externalHost;
  const transportData = params.transport_data ?? '';
  if (transportData.includes('/')) throw new AriError(400, 'transport_data must not contain /');
  const { channel, snapshot } = originate(core, {
    endpoint: `WebSocket/${connection}/${transportData}d(${params.direction ?? 'both'})`,
    app: params.app,
    appArgs: params.data || undefined,
    channelId: params.channelId || undefined,
    variables: params.variables,
    formats: params.format,
    // As Asterisk: externalMedia dials with no timeout of its own, which originate makes 30 s.
    timeout: 0,
  });
  // Every variable of the channel, as Asterisk answers: how a server-mode application learns its id.
  const channelvars: Record<string, string> = {};
  for (const name of channel.variableNames()) Object.defineProperty(channelvars, name, { value: channel.getVariable(name) ?? '', enumerable: true });
  return { ...snapshot, channelvars };
}
