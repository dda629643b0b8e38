// SIP over TLS (RFC 3261 §26.2, Asterisk's protocol=tls transport): two stacks talk over node:tls
// with certificates made at test time by a test CA; verify_server checks the chain and the name,
// require_client_cert refuses clients without one, a reply reuses the connection a request came
// on, the certificates are replaced at reload (a bad new pair keeps the old), and what a hostile
// client does — plaintext on the TLS port, a handshake that never finishes, many at once — ends
// in a closed socket, never a crash or a held resource.
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { SipRequest, newBranch, newCallId, newTag, type SipResponse } from '../../src/sip/message.ts';
import { openSipStack, type SipStack } from '../../src/sip/stack.ts';
import type { TlsSettings } from '../../src/sip/tls-material.ts';
import { TlsMaterial } from '../../src/sip/tls-material.ts';
import type { Destination, Source, TransportOptions } from '../../src/sip/transport.ts';
import { makeTestCa, NO_OPENSSL, type CertPair, type TestCa } from '../helpers/tls-certs.ts';
import { FAST, sleep, waitUntil } from './helpers.ts';

const POLICY: TlsSettings = { method: 'sslv23', verifyServer: false, verifyClient: false, requireClientCert: false, allowWildcardCerts: false };

let ca: TestCa;
let otherCa: TestCa;
let server: CertPair;
let client: CertPair;
let wildcard: CertPair;
let stranger: CertPair;
const stacks: SipStack[] = [];

before(async () => {
  if (NO_OPENSSL) return;
  [ca, otherCa] = await Promise.all([makeTestCa(), makeTestCa('Someone Else CA')]);
  server = await ca.issue('patchbay', 'DNS:localhost,IP:127.0.0.1');
  client = await ca.issue('phone', 'DNS:phone.test');
  wildcard = await ca.issue('wild', 'DNS:*.example.test');
  stranger = await otherCa.issue('stranger', 'DNS:localhost,IP:127.0.0.1');
});

after(async () => {
  for (const stack of stacks) {
    stack.layer.close();
    await stack.transport.close();
  }
  ca?.remove();
  otherCa?.remove();
});

interface Peer extends SipStack {
  readonly requests: { method: string; source: Source }[];
  readonly port: number;
}

/** A stack with a TLS listener (ephemeral port; none without a certificate) answering every request 200. */
async function tlsPeer(settings: Partial<TlsSettings>, options: TransportOptions = {}): Promise<Peer> {
  const requests: Peer['requests'] = [];
  const stack = openSipStack(
    { host: '127.0.0.1', udpPort: false, tcpPort: false, tlsPort: settings.certFile ? 0 : false, tls: { ...POLICY, ...settings }, ...options },
    {
      onRequest: (request, tx) => {
        requests.push({ method: request.method, source: tx.source });
        tx.reply(200);
      },
    },
    { timers: FAST },
  );
  await stack.transport.start();
  stacks.push(stack);
  return { ...stack, requests, port: stack.transport.port('TLS') ?? 0 };
}

function options(to: string): SipRequest {
  return new SipRequest('OPTIONS', to, [
    ['From', `<sip:test@127.0.0.1>;tag=${newTag()}`],
    ['To', `<${to}>`],
    ['Call-ID', newCallId()],
    ['CSeq', '1 OPTIONS'],
  ]);
}

/** Sends an OPTIONS through `from` and resolves with its final response (or the transport error). */
function ask(from: SipStack, destination: Destination): Promise<SipResponse | Error> {
  return new Promise((resolve) => {
    from.layer.sendRequest(options(`sip:${destination.host}:${destination.port};transport=tls`), destination, {
      onResponse: (response) => {
        if (response.status >= 200) resolve(response);
      },
      onTransportError: (error) => resolve(error),
      onTimeout: () => resolve(new Error('timeout')),
    });
  });
}

describe('TLS material', { skip: NO_OPENSSL }, () => {
  it('loads a pair, refuses a key of another certificate and a wrong passphrase, naming the file', async () => {
    assert.ok(TlsMaterial.load({ ...POLICY, certFile: server.cert, privKeyFile: server.key }).canServe);
    assert.throws(() => TlsMaterial.load({ ...POLICY, certFile: server.cert, privKeyFile: client.key }), /TLS material refused/);
    assert.throws(() => TlsMaterial.load({ ...POLICY, certFile: `${ca.dir}/nothing.crt`, privKeyFile: server.key }), /cert_file .*nothing\.crt: ENOENT/);
    const locked = await ca.issue('locked', 'DNS:localhost', { passphrase: 'secret-pass' });
    assert.throws(() => TlsMaterial.load({ ...POLICY, certFile: locked.cert, privKeyFile: locked.key, password: 'wrong' }));
    assert.ok(TlsMaterial.load({ ...POLICY, certFile: locked.cert, privKeyFile: locked.key, password: 'secret-pass' }).canServe);
    assert.ok(TlsMaterial.load({ ...POLICY, caListPath: ca.dir }).clientOptions('localhost', 5061).ca, 'ca_list_path reads the directory');
  });
});

describe('SIP over TLS', { skip: NO_OPENSSL }, () => {
  it('a request over TLS verified against the CA (SNI and name check) is answered on the same connection; Via says TLS', async () => {
    const listener = await tlsPeer({ certFile: server.cert, privKeyFile: server.key });
    const caller = await tlsPeer({ certFile: client.cert, privKeyFile: client.key, caListFile: ca.cert, verifyServer: true });
    const answer = await ask(caller, { transport: 'TLS', host: 'localhost', port: listener.port });
    assert.ok(!(answer instanceof Error), String(answer));
    assert.equal(answer.status, 200);
    assert.equal(listener.requests[0]?.source.transport, 'TLS');
    assert.match(answer.get('via') ?? '', /^SIP\/2\.0\/TLS 127\.0\.0\.1:\d+/);
    assert.equal(caller.transport.connectionCount, 1);
    // The listener's request back to the caller's source reuses the connection (flow reuse).
    const source = listener.requests[0]!.source;
    const back = await ask(listener, { transport: 'TLS', host: source.address, port: source.port });
    assert.ok(!(back instanceof Error), String(back));
    assert.equal(back.status, 200);
    assert.equal(caller.requests.length, 1, 'the caller got the request on its own connection');
    assert.equal(listener.transport.connectionCount, 1, 'no second connection');
  });

  it('verify_server refuses a server whose certificate another CA signed, and a wildcard one unless allowed', async () => {
    const impostor = await tlsPeer({ certFile: stranger.cert, privKeyFile: stranger.key });
    const caller = await tlsPeer({ certFile: client.cert, privKeyFile: client.key, caListFile: ca.cert, verifyServer: true });
    const refused = await ask(caller, { transport: 'TLS', host: 'localhost', port: impostor.port });
    assert.ok(refused instanceof Error, 'refused');
    assert.equal(impostor.requests.length, 0);

    const wild = await tlsPeer({ certFile: wildcard.cert, privKeyFile: wildcard.key });
    // The certificate names *.example.test: a connection to 127.0.0.1 asks for that name (SNI, name check).
    const strict = tls.connect({ ...TlsMaterial.load({ ...POLICY, caListFile: ca.cert, verifyServer: true }).clientOptions('sip.example.test', wild.port), host: '127.0.0.1' });
    const strictError = await new Promise<Error | undefined>((resolve) => {
      strict.once('secureConnect', () => resolve(undefined));
      strict.once('error', resolve);
    });
    strict.destroy();
    assert.match(String(strictError), /wildcard/);
    const lenient = tls.connect({ ...TlsMaterial.load({ ...POLICY, caListFile: ca.cert, verifyServer: true, allowWildcardCerts: true }).clientOptions('sip.example.test', wild.port), host: '127.0.0.1' });
    const lenientError = await new Promise<Error | undefined>((resolve) => {
      lenient.once('secureConnect', () => resolve(undefined));
      lenient.once('error', resolve);
    });
    lenient.destroy();
    assert.equal(lenientError, undefined);
  });

  it('require_client_cert refuses a client without a certificate, or with one of another CA; verify_client alone lets a certificate-less client in', async () => {
    const strict = await tlsPeer({ certFile: server.cert, privKeyFile: server.key, caListFile: ca.cert, requireClientCert: true, verifyClient: true });
    const anonymous = await tlsPeer({});
    const outsider = await tlsPeer({ certFile: stranger.cert, privKeyFile: stranger.key });
    const known = await tlsPeer({ certFile: client.cert, privKeyFile: client.key });
    assert.ok((await ask(anonymous, { transport: 'TLS', host: '127.0.0.1', port: strict.port })) instanceof Error);
    assert.ok((await ask(outsider, { transport: 'TLS', host: '127.0.0.1', port: strict.port })) instanceof Error);
    const accepted = await ask(known, { transport: 'TLS', host: '127.0.0.1', port: strict.port });
    assert.equal(accepted instanceof Error ? accepted.message : accepted.status, 200);
    assert.equal(strict.requests.length, 1);

    const lenient = await tlsPeer({ certFile: server.cert, privKeyFile: server.key, caListFile: ca.cert, verifyClient: true });
    const fresh = await tlsPeer({});
    const answer = await ask(fresh, { transport: 'TLS', host: '127.0.0.1', port: lenient.port });
    assert.equal(answer instanceof Error ? answer.message : answer.status, 200);
  });

  it('method=tlsv1_3 on one side and tlsv1_2 on the other cannot agree; sslv23 speaks to both', async () => {
    const only13 = await tlsPeer({ certFile: server.cert, privKeyFile: server.key, method: 'tlsv1_3' });
    const only12 = await tlsPeer({ method: 'tlsv1_2' });
    const best = await tlsPeer({});
    assert.ok((await ask(only12, { transport: 'TLS', host: '127.0.0.1', port: only13.port })) instanceof Error);
    const answer = await ask(best, { transport: 'TLS', host: '127.0.0.1', port: only13.port });
    assert.equal(answer instanceof Error ? answer.message : answer.status, 200);
  });
});

describe('TLS certificates at reload', { skip: NO_OPENSSL }, () => {
  it('new connections get the new certificate; an invalid new pair keeps the old one', async () => {
    const cert = `${ca.dir}/live.crt`;
    const key = `${ca.dir}/live.key`;
    copyFileSync(server.cert, cert);
    copyFileSync(server.key, key);
    const listener = await tlsPeer({ certFile: cert, privKeyFile: key });
    const presented = async (): Promise<string> => {
      const socket = tls.connect({ host: '127.0.0.1', port: listener.port, rejectUnauthorized: false });
      await new Promise<void>((resolve, reject) => {
        socket.once('secureConnect', resolve);
        socket.once('error', reject);
      });
      const serial = socket.getPeerCertificate().serialNumber;
      socket.destroy();
      return serial;
    };
    const before = await presented();
    const renewed = await ca.issue('patchbay', 'DNS:localhost,IP:127.0.0.1');
    copyFileSync(renewed.cert, cert);
    copyFileSync(renewed.key, key);
    listener.transport.reloadTls();
    const afterReload = await presented();
    assert.notEqual(afterReload, before, 'the renewed certificate is presented');

    writeFileSync(cert, 'not a certificate');
    assert.throws(() => listener.transport.reloadTls(), /TLS material refused/);
    assert.equal(await presented(), afterReload, 'the previous certificate stays in use');
  });
});

describe('hostile TLS clients', { skip: NO_OPENSSL }, () => {
  it('plaintext SIP on the TLS port, a silent handshake and too many handshakes end in closed sockets and no held resource', async () => {
    const drops: string[] = [];
    const requests: string[] = [];
    const stack = openSipStack(
      { host: '127.0.0.1', udpPort: false, tcpPort: false, tlsPort: 0, tls: { ...POLICY, certFile: server.cert, privKeyFile: server.key }, firstMessageTimeoutMs: 500, maxTlsHandshakes: 3 },
      { onRequest: (request, tx) => (requests.push(request.method), tx.reply(200)) },
      { timers: FAST },
      (reason) => drops.push(reason),
    );
    await stack.transport.start();
    stacks.push(stack);
    const port = stack.transport.port('TLS')!;
    const open = async (): Promise<{ socket: net.Socket; closed: () => boolean }> => {
      const socket = net.connect({ host: '127.0.0.1', port });
      let closed = false;
      socket.on('close', () => (closed = true));
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      return { socket, closed: () => closed };
    };

    const plain = await open();
    plain.socket.write(`OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5;branch=${newBranch()}\r\nContent-Length: 0\r\n\r\n`);
    await waitUntil(plain.closed, 5000, 'the plaintext client closed');
    assert.ok(drops.some((reason) => reason.startsWith('TLS handshake failed')), drops.join('; '));

    const silent = [await open(), await open(), await open()];
    await sleep(100);
    const fourth = await open();
    await waitUntil(fourth.closed, 5000, 'the fourth handshake refused at once');
    assert.ok(drops.includes('too many TLS handshakes in progress'));
    await waitUntil(() => silent.every((s) => s.closed()), 5000, 'silent handshakes closed after firstMessageTimeoutMs');

    // Everything was let go: a real client is served.
    const caller = await tlsPeer({});
    const answer = await ask(caller, { transport: 'TLS', host: '127.0.0.1', port });
    assert.equal(answer instanceof Error ? answer.message : answer.status, 200);
    assert.deepEqual(requests, ['OPTIONS']);
  });
});
