// Interoperability with the real npm `ari-client`: it builds its whole API from our Swagger
// documents, drives the REST operations through them and receives events over the WebSocket.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import ari, { type Client } from 'ari-client';
import { internals, resourceOf } from '../helpers/ari-client.ts';
import { ARI_DATE_PATTERN } from '../../src/util/ari-date.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const APP = 'myapp';

let server: TestServer;
let client: Client;
before(async () => {
  server = await startTestServer();
  client = await withTimeout(ari.connect(server.url, 'asterisk', 'asterisk'), 'connect');
  await withTimeout(client.start(APP), 'start');
});
after(async () => {
  // stop() closes the WebSocket without the client's automatic reconnect.
  client?.stop();
  if (client) internals(client)._ws?.terminate();
  await server?.stop();
});

function withTimeout<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('ari-client against Patchbay', () => {
  test('the client built every resource from the Swagger documents, system included', () => {
    for (const resource of ['asterisk', 'endpoints', 'channels', 'bridges', 'recordings', 'sounds', 'playbacks', 'deviceStates', 'mailboxes', 'events', 'applications']) {
      assert.equal(typeof resourceOf(client, resource), 'object', resource);
    }
    assert.equal(typeof client.asterisk.ping, 'function');
    assert.equal(typeof client.channels.originate, 'function');
    assert.ok(internals(client).system, 'the system resource is exposed');
    assert.equal(typeof internals(client).system!.ping, 'function');
  });

  test('asterisk.ping', async () => {
    const pong = await client.asterisk.ping();
    assert.equal(pong.ping, 'pong');
    assert.equal(pong.asterisk_id, server.config.serverId);
    assert.match(pong.timestamp, ARI_DATE_PATTERN);
  });

  test('system.ping', async () => {
    const pong = await internals(client).system!.ping();
    assert.equal(pong.ping, 'pong');
    assert.equal(pong.asterisk_id, server.config.serverId);
  });

  test('asterisk.getInfo({only: "build"})', async () => {
    const info = await client.asterisk.getInfo({ only: 'build' });
    assert.deepEqual(Object.keys(info), ['build']);
    assert.equal(typeof info.build!.os, 'string');
    const two = await client.asterisk.getInfo({ only: 'system,status' });
    assert.deepEqual(Object.keys(two).sort(), ['status', 'system']);
    assert.equal(two.system!.entity_id, server.config.serverId);
  });

  test('asterisk.listModules and getModule', async () => {
    const modules = await client.asterisk.listModules();
    assert.ok(Array.isArray(modules));
    const ariModule = modules.find((module: { name: string }) => module.name === 'res_ari.so');
    assert.equal(ariModule?.status, 'Running');
    const one = await client.asterisk.getModule({ moduleName: 'res_ari_channels.so' });
    assert.equal(one.name, 'res_ari_channels.so');
  });

  test('an error answer rejects the promise with the server message', async () => {
    await assert.rejects(client.asterisk.getModule({ moduleName: 'res_nothing.so' }), /not be found|not found/i);
    await assert.rejects(client.asterisk.loadModule({ moduleName: 'res_ari.so' }), /already loaded/);
  });

  test('asterisk.listLogChannels and addLog', async () => {
    const before: { channel: string }[] = await client.asterisk.listLogChannels();
    assert.ok(before.some((channel) => channel.channel === 'messages.log'));
    await client.asterisk.addLog({ logChannelName: 'client.log', configuration: 'notice,warning' });
    const after: { channel: string; configuration: string; type: string }[] = await client.asterisk.listLogChannels();
    const created = after.find((channel) => channel.channel === 'client.log');
    assert.deepEqual(created, { channel: 'client.log', type: 'File', status: 'Enabled', configuration: 'notice warning' });
    assert.ok(existsSync(join(server.config.dirs.logs, 'client.log')));
    await client.asterisk.rotateLog({ logChannelName: 'client.log' });
    await client.asterisk.deleteLog({ logChannelName: 'client.log' });
    await assert.rejects(client.asterisk.deleteLog({ logChannelName: 'client.log' }));
  });

  test('global variables through the client', async () => {
    await client.asterisk.setGlobalVar({ variable: 'CLIENTVAR', value: 'set by ari-client' });
    assert.deepEqual(await client.asterisk.getGlobalVar({ variable: 'CLIENTVAR' }), { value: 'set by ari-client' });
  });

  test('dynamic configuration through the client (body parameter fields)', async () => {
    const tuples = await client.asterisk.updateObject({
      configClass: 'res_pjsip',
      objectType: 'endpoint',
      id: 'from-client',
      fields: [{ attribute: 'context', value: 'client-ctx' }],
    });
    assert.deepEqual(tuples[0], { attribute: 'context', value: 'client-ctx' });
    const read = await client.asterisk.getObject({ configClass: 'res_pjsip', objectType: 'endpoint', id: 'from-client' });
    assert.deepEqual(read, tuples);
  });

  test('applications.list and get show the started application', async () => {
    const apps = await client.applications.list();
    const names = apps.map((app: { name: string }) => app.name);
    assert.ok(names.includes(APP), `applications: ${names.join(', ')}`);
    const app = await client.applications.get({ applicationName: APP });
    assert.equal(app.name, APP);
    assert.deepEqual(app.channel_ids, []);
    assert.deepEqual(app.bridge_ids, []);
  });

  test('deviceStates.update raises DeviceStateChanged for a subscribed application', async () => {
    const device = 'Stasis:client-lamp';
    const subscribed = await client.applications.subscribe({ applicationName: APP, eventSource: `deviceState:${device}` });
    assert.ok(subscribed.device_names.includes(device), `device_names: ${subscribed.device_names}`);

    const received = withTimeout(
      new Promise<{ event: Record<string, any>; instance: Record<string, any> }>((resolve) => {
        const listener = (event: Record<string, any>, instance: Record<string, any>): void => {
          if (event.device_state?.name !== device) return;
          client.removeListener('DeviceStateChanged', listener);
          resolve({ event, instance });
        };
        client.on('DeviceStateChanged', listener);
      }),
      'DeviceStateChanged',
    );
    await client.deviceStates.update({ deviceName: device, deviceState: 'BUSY' });
    const { event, instance } = await received;
    assert.equal(event.type, 'DeviceStateChanged');
    assert.equal(event.application, APP);
    assert.equal(event.asterisk_id, server.config.serverId);
    assert.match(event.timestamp, ARI_DATE_PATTERN);
    assert.deepEqual(event.device_state, { name: device, state: 'BUSY' });
    // The client promotes the device_state field to one of its DeviceState instances.
    assert.equal(instance.name, device);
    assert.equal(instance.state, 'BUSY');

    const state = await client.deviceStates.get({ deviceName: device });
    assert.equal(state.state, 'BUSY');
  });
});
