// Live res_pjsip objects: an endpoint, aor and auth PUT through ARI's dynamic configuration take
// a digest REGISTER without a restart (online, ContactStatusChange, PeerStatusChange,
// EndpointStateChange); DELETE takes the endpoint and its registrations away. And endpoints of a
// pjsip.conf (templates included) are listed by GET /endpoints.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { registerPjsipConfigTypes } from '../../../src/channels/pjsip/config/store-types.ts';
import { DynamicConfig } from '../../../src/core/dynamic-config/store.ts';
import { pjsipAttributeNames } from '../../../src/channels/pjsip/config/index.ts';
import { startTestServer, type EventSocket, type TestServer } from '../../helpers/server.ts';
import { challengeOf, registerAuthorization, UdpRegistrant } from '../../helpers/udp-registrant.ts';

const json = (body: unknown): RequestInit => ({ method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const fields = (record: Record<string, string>) => ({ fields: Object.entries(record).map(([attribute, value]) => ({ attribute, value })) });

/** A UDP phone of a few lines: REGISTER with digest (MD5, qop=auth) in one Call-ID, answers nothing else. */
class Phone extends UdpRegistrant {
  readonly #callId = randomBytes(8).toString('hex');

  constructor(
    readonly user: string,
    readonly password: string,
    serverPort: number,
  ) {
    super(serverPort);
  }

  /** REGISTER (answering one digest challenge); resolves with the final status. */
  async register(expires: number): Promise<number> {
    const request = { user: this.user, callId: this.#callId, expires };
    let response = await this.sendRegister(request);
    if (response.status === 401) {
      const { realm, nonce } = challengeOf(response);
      response = await this.sendRegister({ ...request, authorization: registerAuthorization(this.user, this.password, realm, nonce, this.registrarUri) });
    }
    return response.status;
  }
}

describe('res_pjsip objects from dynamic configuration are live', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.stop();
  });

  async function ariJson(path: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
    const response = await server.ari(path, init);
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  }

  async function next(events: EventSocket, type: string): Promise<Record<string, unknown>> {
    try {
      return await events.nextOfType(type, 3000);
    } catch (error) {
      console.error(`no ${type}; the server's last log lines:\n${server.logLines.slice(-15).join('')}`);
      throw error;
    }
  }

  test('PUT endpoint+aor+auth → REGISTER works, events flow; DELETE → gone and its registration with it', async () => {
    const base = '/asterisk/config/dynamic/res_pjsip';
    // Asterisk's attribute names, as an Asterisk user writes them.
    assert.equal((await ariJson(`${base}/auth/alice-auth`, json(fields({ auth_type: 'userpass', username: 'alice', password: 's3cret' })))).status, 200);
    const aor = await ariJson(`${base}/aor/alice`, json(fields({ max_contacts: '1', remove_existing: 'yes' })));
    assert.equal(aor.status, 200);
    const endpoint = await ariJson(
      `${base}/endpoint/alice`,
      json(fields({ context: 'default', disallow: 'all', allow: 'ulaw', auth: 'alice-auth', aors: 'alice', identify_by: 'username', dtmf_mode: 'rfc4733', callerid: '"Alice" <100>', message_context: 'messages' })),
    );
    assert.equal(endpoint.status, 200, JSON.stringify(endpoint.body));

    const listed = await ariJson('/endpoints/PJSIP/alice');
    assert.equal(listed.status, 200);
    assert.equal((listed.body as { state: string }).state, 'offline');

    const app = await server.events('app=dyn-watch');
    const tech = await server.events('app=dyn-tech');
    try {
      assert.equal((await server.ari('/applications/dyn-watch/subscription?eventSource=endpoint:PJSIP/alice', { method: 'POST' })).status, 200);
      assert.equal((await server.ari('/applications/dyn-tech/subscription?eventSource=endpoint:PJSIP', { method: 'POST' })).status, 200);

      const phone = await new Phone('alice', 's3cret', server.core.pjsip.port).start();
      try {
        // A wrong password is refused and changes nothing.
        const intruder = await new Phone('alice', 'wrong', server.core.pjsip.port).start();
        try {
          assert.equal(await intruder.register(60), 403);
        } finally {
          intruder.close();
        }

        assert.equal(await phone.register(60), 200);
        const contact = await next(app, 'ContactStatusChange');
        const info = contact.contact_info as Record<string, string>;
        assert.equal(info.aor, 'alice');
        assert.equal(info.uri, `sip:alice@127.0.0.1:${phone.port}`);
        assert.equal(info.contact_status, 'NonQualified');
        assert.equal((contact.endpoint as { resource: string }).resource, 'alice');
        const peer = await next(app, 'PeerStatusChange');
        assert.equal((peer.peer as { peer_status: string }).peer_status, 'Reachable');
        const state = await next(app, 'EndpointStateChange');
        assert.equal((state.endpoint as { state: string }).state, 'online');
        // The technology-level subscriber sees the same.
        await next(tech, 'ContactStatusChange');
        await next(tech, 'PeerStatusChange');
        assert.equal(((await ariJson('/endpoints/PJSIP/alice')).body as { state: string }).state, 'online');

        // Unregister: Removed, Unreachable, offline.
        assert.equal(await phone.register(0), 200);
        assert.equal(((await next(app, 'ContactStatusChange')).contact_info as { contact_status: string }).contact_status, 'Removed');
        assert.equal(((await next(app, 'PeerStatusChange')).peer as { peer_status: string }).peer_status, 'Unreachable');
        assert.equal(((await next(app, 'EndpointStateChange')).endpoint as { state: string }).state, 'offline');

        // Registered again, then the endpoint is deleted: its registration goes with it.
        assert.equal(await phone.register(60), 200);
        assert.equal(((await next(app, 'EndpointStateChange')).endpoint as { state: string }).state, 'online');
        await tech.quiet(200);
        assert.equal((await server.ari(`${base}/endpoint/alice`, { method: 'DELETE' })).status, 204);
        // The endpoint's own subscriptions end with it; the technology's subscribers hear it go.
        const removed = await next(tech, 'ContactStatusChange');
        assert.equal((removed.contact_info as { contact_status: string }).contact_status, 'Removed');
        assert.equal((removed.endpoint as { resource: string }).resource, 'alice');
        assert.equal(((await next(tech, 'PeerStatusChange')).peer as { peer_status: string }).peer_status, 'Unreachable');
        assert.equal((await ariJson('/endpoints/PJSIP/alice')).status, 404);
        assert.equal(server.core.pjsip.config.endpoints.has('alice'), false);
        // The AOR no endpoint names any more holds no binding: a fresh endpoint over it starts offline.
        assert.equal((await ariJson(`${base}/endpoint/alice`, json(fields({ context: 'default', allow: 'ulaw', auth: 'alice-auth', aors: 'alice' })))).status, 200);
        assert.equal(((await ariJson('/endpoints/PJSIP/alice')).body as { state: string }).state, 'offline');
        // ... and takes a REGISTER at once.
        assert.equal(await phone.register(60), 200);
        assert.equal(((await ariJson('/endpoints/PJSIP/alice')).body as { state: string }).state, 'online');
        assert.equal(await phone.register(0), 200);
      } finally {
        phone.close();
      }
    } finally {
      app.socket.close();
      tech.socket.close();
    }
  });

  test('every attribute of the res_pjsip types is accepted under its Asterisk name; unknown ones are refused', async () => {
    const base = '/asterisk/config/dynamic/res_pjsip';
    const identify = await ariJson(`${base}/identify/trunk-ip`, json(fields({ endpoint: 'trunk', match: '192.0.2.0/24', srv_lookups: 'no' })));
    assert.equal(identify.status, 200, JSON.stringify(identify.body));
    const auth = await ariJson(`${base}/auth/md5`, json(fields({ auth_type: 'md5', username: 'u', md5_cred: '0123456789abcdef0123456789abcdef', nonce_lifetime: '32' })));
    assert.equal(auth.status, 200, JSON.stringify(auth.body));
    assert.equal((await ariJson(`${base}/endpoint/weird`, json(fields({ no_such_option: 'x' })))).status, 400);
    // Unset fields report Asterisk's defaults.
    const bare = await ariJson(`${base}/aor/bare`, { method: 'PUT' });
    const values = Object.fromEntries((bare.body as { attribute: string; value: string }[]).map((t) => [t.attribute, t.value]));
    assert.equal(values.max_contacts, '0');
    assert.equal(values.remove_existing, 'no');
    for (const path of ['identify/trunk-ip', 'auth/md5', 'aor/bare']) assert.equal((await server.ari(`${base}/${path}`, { method: 'DELETE' })).status, 204);
  });
});

test("the store accepts every attribute the SIP technology reads, under Asterisk's names", () => {
  const store = new DynamicConfig();
  const saved = new Map<string, Record<string, string>>();
  store.attachBackend({
    name: 'sqlite',
    readOnly: false,
    writable: true,
    retrieve: (c, t, id) => saved.get(`${c}/${t}/${id}`),
    ids: () => [],
    save: (c, t, id, f) => void saved.set(`${c}/${t}/${id}`, f),
    remove: (c, t, id) => void saved.delete(`${c}/${t}/${id}`),
  });
  registerPjsipConfigTypes(store);
  for (const type of ['endpoint', 'aor', 'auth', 'identify', 'registration']) {
    const accepted = new Set(store.update('res_pjsip', type, 'x').map((tuple) => tuple.attribute));
    const missing = pjsipAttributeNames(type).filter((name) => !accepted.has(name));
    assert.deepEqual(missing, [], `res_pjsip/${type}`);
  }
});

describe('endpoints of a pjsip.conf are listed', () => {
  let server: TestServer;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'patchbay-pjsipconf-'));
    const file = join(dir, 'pjsip.conf');
    writeFileSync(
      file,
      [
        '[phone](!)',
        'type=endpoint',
        'context=default',
        'disallow=all',
        'allow=ulaw',
        'allow=alaw',
        '',
        '[bob](phone)',
        'aors=bob',
        '',
        '[bob]',
        'type=aor',
        'max_contacts=1',
        '',
        '[carol](phone)',
        'aors=carol',
        '',
      ].join('\n'),
    );
    server = await startTestServer({
      sip: { pjsip_conf: file },
      config_objects: { res_pjsip: { endpoint: { dave: { context: 'default', allow: 'ulaw' } } } },
    });
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('GET /endpoints lists them (PJSIP/<id>, offline), beside the YAML ones; the template is not an endpoint', async () => {
    const response = await server.ari('/endpoints/PJSIP');
    assert.equal(response.status, 200);
    const list = (await response.json()) as { technology: string; resource: string; state: string }[];
    assert.deepEqual(
      list.map((e) => `${e.technology}/${e.resource}:${e.state}`),
      ['PJSIP/bob:offline', 'PJSIP/carol:offline', 'PJSIP/dave:offline'],
    );
    // The technology has them too, template settings included.
    const bob = server.core.pjsip.config.endpoints.get('bob');
    assert.deepEqual(bob?.codecs, ['ulaw', 'alaw']);
    assert.deepEqual(bob?.aors, ['bob']);
    assert.equal(server.core.pjsip.config.aors.get('bob')?.maxContacts, 1);
    // Read-only: the file is the operator's.
    assert.equal((await server.ari('/asterisk/config/dynamic/res_pjsip/endpoint/bob', { method: 'DELETE' })).status, 403);
  });
});
