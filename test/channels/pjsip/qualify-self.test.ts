// Qualify to our own contact (issue 20, item 11): an AOR whose contact is Patchbay's own SIP
// address gets its OPTIONS answered by Patchbay itself, so the contact becomes Reachable and the
// endpoint online, as Asterisk qualifying a contact that points back at itself does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../../helpers/server.ts';

describe('qualify: a contact that is Patchbay itself', () => {
  let server: TestServer;
  let events: EventSocket;

  before(async () => {
    server = await startTestServer();
    events = await server.events('app=qualify-self');
    assert.equal((await server.ari('/applications/qualify-self/subscription?eventSource=endpoint:PJSIP', { method: 'POST' })).status, 200);
  });

  after(async () => {
    await events?.close();
    await server?.stop();
  });

  /** The next event of `type` for `resource`, skipping the rest. */
  async function next(type: string, resource: string, timeoutMs = 30_000): Promise<Record<string, any>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = (await events.nextOfType(type, Math.max(1, deadline - Date.now()))) as Record<string, any>;
      if (event.endpoint?.resource === resource) return event;
    }
  }

  for (const [resource, suffix] of [
    ['self-udp', ''],
    ['self-tcp', ';transport=tcp'],
  ] as const) {
    test(`the contact becomes Reachable and the endpoint online (${resource})`, async () => {
      const contact = `sip:${resource}@127.0.0.1:${server.core.pjsip.port}${suffix}`;
      const put = async (type: string, id: string, record: Record<string, string>): Promise<void> => {
        const body = JSON.stringify({ fields: Object.entries(record).map(([attribute, value]) => ({ attribute, value })) });
        const response = await server.ari(`/asterisk/config/dynamic/res_pjsip/${type}/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
        assert.equal(response.status, 200, await response.text());
      };
      // A generous qualify_timeout: on a loaded machine an OPTIONS to ourselves may take longer than
      // half a second, and a late answer would first make the contact Unreachable.
      await put('aor', resource, { contact, qualify_frequency: '1', qualify_timeout: '5' });
      await put('endpoint', resource, { context: 'default', allow: 'ulaw', aors: resource });
      const change = await next('ContactStatusChange', resource);
      assert.equal(change.contact_info.contact_status, 'Reachable', JSON.stringify(change.contact_info));
      assert.equal(change.contact_info.uri, contact);
      assert.equal((await next('PeerStatusChange', resource)).peer.peer_status, 'Reachable');
      const endpoint = (await (await server.ari(`/endpoints/PJSIP/${resource}`)).json()) as { state: string };
      assert.equal(endpoint.state, 'online');
    });
  }
});
