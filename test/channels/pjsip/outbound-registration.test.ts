// Outbound registration (`type=registration`): against SIPp as a provider's registrar (401 MD5
// challenge checked with SIPp's verifyauth, the REGISTER's headers matched, a refresh before the
// short expiry, Expires: 0 when the object is deleted), and against registrars of a few lines
// here that challenge with SHA-256, fail temporarily, forbid, or refuse the password — checking
// retries, max_retries, the Rejected status and the unregistration at shutdown.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DigestAuthenticator } from '../../../src/sip/auth/digest.ts';
import { createResponse, SipRequest } from '../../../src/sip/message.ts';
import { parseMessage } from '../../../src/sip/parser.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitUntil } from '../../sip/helpers.ts';

const SCENARIOS = fileURLToPath(new URL('../../sip/scenarios/', import.meta.url));
const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;

type Behaviour = 'sha256' | 'unavailable' | 'forbidden' | 'flaky' | 'always-stale';

/** A registrar on UDP: challenges (SHA-256 first, then MD5), verifies, and answers by behaviour. */
class TestRegistrar {
  readonly socket = dgram.createSocket('udp4');
  readonly requests: SipRequest[] = [];
  readonly auth = new DigestAuthenticator({ realm: 'test.example', algorithms: ['SHA-256', 'MD5'] });
  port = 0;
  #failuresLeft: number;

  constructor(
    readonly behaviour: Behaviour,
    failures = 0,
  ) {
    this.#failuresLeft = failures;
  }

  async start(): Promise<this> {
    this.socket.on('message', (data, remote) => {
      const parsed = parseMessage(data);
      if (!parsed.ok || !(parsed.message instanceof SipRequest) || parsed.message.method !== 'REGISTER') return;
      const request = parsed.message;
      // A retransmission (same branch) is not a new attempt.
      if (this.requests.some((seen) => seen.topVia()?.branch === request.topVia()?.branch)) return;
      this.requests.push(request);
      const reply = (status: number, headers: Array<[string, string]> = []): void => {
        const response = createResponse(request, status, undefined, { toTag: 'reg' });
        for (const [name, value] of headers) response.add(name, value);
        this.socket.send(response.serialize(), remote.port, remote.address);
      };
      if (this.behaviour === 'unavailable') return reply(503);
      if (this.behaviour === 'forbidden') return reply(403);
      // A broken (or hostile) registrar: every answer is called stale.
      if (this.behaviour === 'always-stale') return reply(401, this.auth.challenge({ stale: true }).map((value) => ['WWW-Authenticate', value] as [string, string]));
      if (this.behaviour === 'flaky' && this.#failuresLeft > 0) {
        this.#failuresLeft--;
        return reply(503);
      }
      const verdict = this.auth.verify({
        method: 'REGISTER',
        authorization: request.authorization(),
        lookup: (username) => (username === 'acct' ? { password: 'secret' } : undefined),
      });
      if (!verdict.ok) {
        if (verdict.reason === 'missing' || verdict.reason === 'stale') return reply(401, this.auth.challenge().map((value) => ['WWW-Authenticate', value] as [string, string]));
        return reply(401, this.auth.challenge().map((value) => ['WWW-Authenticate', value] as [string, string]));
      }
      const expires = request.expires() ?? 3600;
      const contact = request.get('contact') ?? '';
      reply(200, expires > 0 ? [['Contact', `${contact};expires=${expires}`]] : []);
    });
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', () => resolve()));
    this.port = this.socket.address().port;
    return this;
  }

  close(): void {
    this.socket.close();
  }
}

function statusOf(server: TestServer, id: string): { status: string; lastCode?: number } | undefined {
  return server.core.pjsip.registrations().find((registration) => registration.id === id);
}

describe('outbound registration against SIPp as registrar', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.stop();
  });

  test('401 MD5 challenge answered, headers as configured, refresh before expiry, Expires: 0 on delete', async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const child = spawn('sipp', ['-sf', join(SCENARIOS, 'registrar-challenge.xml'), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin', '-timeout', '30s', '-timeout_error']);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise((resolve) => setTimeout(resolve, 500));

    const put = async (type: string, id: string, record: Record<string, string>): Promise<void> => {
      const body = JSON.stringify({ fields: Object.entries(record).map(([attribute, value]) => ({ attribute, value })) });
      const response = await server.ari(`/asterisk/config/dynamic/res_pjsip/${type}/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
      assert.equal(response.status, 200, await response.text());
    };
    await put('auth', 'provider-auth', { auth_type: 'userpass', username: 'trunkuser', password: 'trunkpass' });
    await put('registration', 'provider', {
      server_uri: 'sip:provider.example',
      client_uri: 'sip:trunkuser@provider.example',
      contact_user: 'patchbay-line',
      outbound_auth: 'provider-auth',
      outbound_proxy: `sip:127.0.0.1:${port}`,
      expiration: '120',
      retry_interval: '60',
      max_random_initial_delay: '0',
    });
    await waitUntil(() => statusOf(server, 'provider')?.status === 'Registered', 20_000, 'Registered').catch((error: unknown) => {
      child.kill();
      console.error(output.slice(-3000), server.logLines.slice(-10).join(''));
      throw error;
    });
    assert.equal(statusOf(server, 'provider')?.lastCode, 200);
    // The refresh comes within the 6 s granted (SIPp fails the scenario otherwise) …
    await new Promise((resolve) => setTimeout(resolve, 4500));
    assert.equal(statusOf(server, 'provider')?.status, 'Registered');
    // … and deleting the object unregisters.
    assert.equal((await server.ari('/asterisk/config/dynamic/res_pjsip/registration/provider', { method: 'DELETE' })).status, 204);
    const code = await exited;
    assert.equal(code, 0, output.slice(-3000));
    assert.equal(statusOf(server, 'provider'), undefined);
  });
});

describe('outbound registration: SHA-256, retries, rejection, unregistration at shutdown', () => {
  let server: TestServer | undefined;
  const registrars = {
    sha: new TestRegistrar('sha256'),
    flaky: new TestRegistrar('flaky', 2),
    down: new TestRegistrar('unavailable'),
    forbidden: new TestRegistrar('forbidden'),
    wrong: new TestRegistrar('sha256'),
    lined: new TestRegistrar('sha256'),
    stale: new TestRegistrar('always-stale'),
  };

  before(async () => {
    for (const registrar of Object.values(registrars)) await registrar.start();
    const registration = (registrar: TestRegistrar, extra: Record<string, string | number> = {}) => ({
      server_uri: `sip:127.0.0.1:${registrar.port}`,
      client_uri: `sip:acct@127.0.0.1:${registrar.port}`,
      outbound_auth: 'acct-auth',
      retry_interval: 1,
      max_random_initial_delay: 0,
      expiration: 300,
      ...extra,
    });
    server = await startTestServer({
      config_objects: {
        res_pjsip: {
          auth: {
            'acct-auth': { auth_type: 'userpass', username: 'acct', password: 'secret' },
            'bad-auth': { auth_type: 'userpass', username: 'acct', password: 'not-it' },
          },
          registration: {
            sha: registration(registrars.sha, { contact_user: 'main' }),
            flaky: registration(registrars.flaky, { max_retries: 5 }),
            down: registration(registrars.down, { max_retries: 2 }),
            forbidden: registration(registrars.forbidden),
            wrong: registration(registrars.wrong, { outbound_auth: 'bad-auth' }),
            lined: registration(registrars.lined, { line: 'yes', endpoint: 'trunk', contact_user: 'trunkline' }),
            stale: registration(registrars.stale, { max_retries: 1 }),
          },
          endpoint: { trunk: { context: 'default', allow: 'ulaw' } },
        },
      },
    } as never);
  });

  after(async () => {
    await server?.stop();
    for (const registrar of Object.values(registrars)) registrar.close();
  });

  test('a SHA-256 challenge is answered with SHA-256 and verified by the registrar', async () => {
    await waitUntil(() => statusOf(server!, 'sha')?.status === 'Registered', 20_000, 'sha Registered');
    const [first, second] = registrars.sha.requests;
    assert.equal(first!.authorization().length, 0);
    const credentials = second!.authorization()[0] ?? '';
    assert.match(credentials, /algorithm=SHA-256/);
    assert.match(credentials, /qop=auth/);
    assert.match(credentials, /response="[0-9a-f]{64}"/);
    assert.equal(second!.callId(), first!.callId(), 'one Call-ID for the registration');
    assert.equal(second!.cseq()!.seq, first!.cseq()!.seq + 1);
    assert.match(second!.get('contact') ?? '', new RegExp(`^<sip:main@127\\.0\\.0\\.1:${server!.core.pjsip.port}>$`));
    assert.equal(second!.expires(), 300);
  });

  test('temporary failures are retried after retry_interval until the registrar accepts', async () => {
    await waitUntil(() => statusOf(server!, 'flaky')?.status === 'Registered', 20_000, 'flaky Registered');
    const requests = registrars.flaky.requests;
    // 503, 503, then 401 and the answer: four REGISTERs; each retry waits retry_interval (1 s).
    assert.equal(requests.length, 4);
    assert.equal(statusOf(server!, 'flaky')?.lastCode, 200);
  });

  test('max_retries bounds the attempts; 403 and refused credentials are Rejected at once', async () => {
    await waitUntil(() => statusOf(server!, 'down')?.status === 'Rejected', 20_000, 'down Rejected');
    assert.equal(registrars.down.requests.length, 3, 'the first attempt and max_retries=2 retries');
    assert.equal(statusOf(server!, 'down')?.lastCode, 503);
    await waitUntil(() => statusOf(server!, 'forbidden')?.status === 'Rejected', 20_000, 'forbidden Rejected');
    assert.equal(registrars.forbidden.requests.length, 1);
    await waitUntil(() => statusOf(server!, 'wrong')?.status === 'Rejected', 20_000, 'wrong Rejected');
    assert.equal(registrars.wrong.requests.length, 2, 'challenge, one answer, refused: no retry (auth_rejection_permanent)');
    // Nothing more is sent once Rejected.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(registrars.down.requests.length, 3);
    assert.equal(registrars.forbidden.requests.length, 1);
    assert.equal(registrars.wrong.requests.length, 2);
  });

  test('a registrar that calls every answer stale gets a bounded number of REGISTERs, not one per round trip', async () => {
    await waitUntil(() => statusOf(server!, 'stale')?.status === 'Rejected', 20_000, 'stale Rejected');
    // Per attempt: the first REGISTER, the answer to its challenge and 3 answers to stale ones;
    // max_retries=1 makes two attempts.
    assert.equal(registrars.stale.requests.length, 10);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(registrars.stale.requests.length, 10, 'nothing more once Rejected');
  });

  test('line=yes: the Contact carries a line token, and a request to it is from the registration\'s endpoint', async () => {
    await waitUntil(() => statusOf(server!, 'lined')?.status === 'Registered', 20_000, 'lined Registered');
    const contact = /<([^>]+)>/.exec(registrars.lined.requests.at(-1)!.get('contact') ?? '')?.[1] ?? '';
    assert.match(contact, /^sip:trunkline@127\.0\.0\.1:\d+;line=[0-9a-f]{12}$/);
    const events = await server!.events('app=line-watch');
    try {
      assert.equal((await server!.ari('/applications/line-watch/subscription?eventSource=endpoint:PJSIP/trunk', { method: 'POST' })).status, 200);
      // The provider sends a MESSAGE to our Contact, from a user and address Patchbay does not know.
      const answers: string[] = [];
      const provider = dgram.createSocket('udp4');
      provider.on('message', (data) => answers.push(data.toString()));
      await new Promise<void>((resolve) => provider.bind(0, '127.0.0.1', () => resolve()));
      const send = (uri: string, branch: string) =>
        provider.send(
          [`MESSAGE ${uri} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${provider.address().port};branch=${branch};rport`, 'Max-Forwards: 70', 'From: <sip:someone@provider.example>;tag=x1', `To: <${uri}>`, `Call-ID: line-${branch}`, 'CSeq: 1 MESSAGE', 'Content-Type: text/plain', 'Content-Length: 5', '', 'hello'].join('\r\n'),
          server!.core.pjsip.port,
          '127.0.0.1',
        );
      send(contact, 'z9hG4bKline1');
      const received = (await events.nextOfType('TextMessageReceived', 3000)) as Record<string, any>;
      assert.equal(received.endpoint.resource, 'trunk');
      assert.equal(received.message.body, 'hello');
      await waitUntil(() => answers.some((text) => text.startsWith('SIP/2.0 202')), 20_000, '202');
      // Without the token the sender is unknown: challenged.
      send(contact.replace(/;line=.*$/, ''), 'z9hG4bKline2');
      await waitUntil(() => answers.some((text) => text.startsWith('SIP/2.0 401')), 20_000, '401');
      provider.close();
    } finally {
      await events.close();
    }
  });

  test('GET /metrics counts the outbound registrations and those Registered', async () => {
    const text = await (await fetch(`${server!.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    assert.equal(value('patchbay_sip_outbound_registrations'), 7);
    // sha, flaky and lined are registered; down, forbidden, wrong and stale were rejected.
    assert.equal(value('patchbay_sip_outbound_registered'), 3);
  });

  test('at shutdown the registration is removed with Expires: 0, answering the challenge', async () => {
    const before = registrars.sha.requests.length;
    await server!.stop();
    server = undefined;
    const sent = registrars.sha.requests.slice(before);
    assert.ok(sent.length >= 1, 'an unregistering REGISTER');
    const last = sent.at(-1)!;
    assert.equal(last.expires(), 0);
    assert.ok(last.authorization().length > 0, 'with credentials');
  });
});
