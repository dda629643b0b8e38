// CHANNEL(audionativeformat) through ARI (GET /channels/{id}/variable): the audio format on the
// channel's wire — what the web console shows as a channel's codec.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

describe('CHANNEL(audionativeformat)', () => {
  let server: TestServer;
  let events: EventSocket;
  before(async () => {
    server = await startTestServer();
    events = await server.events('app=formats');
  });
  after(async () => {
    await events.close();
    await server.stop();
  });

  async function nativeFormat(channelId: string): Promise<string> {
    const response = await server.ari(`/channels/${channelId}/variable?variable=${encodeURIComponent('CHANNEL(audionativeformat)')}`);
    assert.equal(response.status, 200);
    return ((await response.json()) as { value: string }).value;
  }

  test('a Local channel carries the core signed linear audio', async () => {
    const channel = (await (await server.ari('/channels?endpoint=Local/answer@default&app=formats', { method: 'POST' })).json()) as { id: string };
    await events.nextOfType('StasisStart', 5000);
    assert.equal(await nativeFormat(channel.id), 'slin');
    await server.ari(`/channels/${channel.id}`, { method: 'DELETE' });
  });

  test('external media over RTP and over WebSocket report their format', async () => {
    const peer = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', resolve));
    try {
      const rtp = (await (
        await server.ari(`/channels/externalMedia?app=formats&format=alaw&external_host=127.0.0.1:${peer.address().port}`, { method: 'POST' })
      ).json()) as { id: string };
      assert.equal(await nativeFormat(rtp.id), 'alaw');
      const media = (await (
        await server.ari('/channels/externalMedia?app=formats&format=slin16&transport=websocket&encapsulation=none&connection_type=server', { method: 'POST' })
      ).json()) as { id: string };
      assert.equal(await nativeFormat(media.id), 'slin16');
      await server.ari(`/channels/${rtp.id}`, { method: 'DELETE' });
      await server.ari(`/channels/${media.id}`, { method: 'DELETE' });
    } finally {
      peer.close();
    }
  });
});
