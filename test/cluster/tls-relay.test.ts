// A real softphone over TLS through member A, called from member B (docs/cluster.md,
// "Registrations"): baresip, trusting a CA made at test time, registers over TLS with A; B
// originates PJSIP/alice and the call runs over A's TLS connection (the only one the phone has:
// it is called back on it, as pjsip does); RTP flows between baresip and B both ways. Skipped
// with a message without nats-server, baresip or openssl.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HAVE_BARESIP, showBaresipOutput, stopBaresip, writeBaresipHome } from '../helpers/baresip.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { makeTestCa, NO_OPENSSL, type TestCa } from '../helpers/tls-certs.ts';
import { clusterStatus, type Json, memberSettings, NO_NATS, until } from './cluster-fixture.ts';

const skip = NO_NATS || !HAVE_BARESIP ? 'baresip is not installed (Debian package baresip)' : NO_OPENSSL;

describe('baresip over TLS through member A, called from member B', { skip }, () => {
  let dir: string;
  let ca: TestCa;
  let nats: NatsServer;
  let a: TestServer;
  let b: TestServer;
  let baresip: ChildProcess | undefined;
  let output = '';
  const status = async (server: TestServer): Promise<Json> => clusterStatus(server.url);
  const channelOnB = async (id: string): Promise<Json | undefined> => {
    const response = await b.ari(`/channels/${id}`);
    return response.status === 200 ? ((await response.json()) as Json) : undefined;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'patchbay-cluster-tls-relay-'));
    writeFileSync(join(dir, 'extensions.conf'), '[phones]\nexten => echo,1,Answer()\n same => n,Echo()\n');
    ca = await makeTestCa();
    const cert = await ca.issue('patchbay', 'DNS:localhost,IP:127.0.0.1');
    nats = await startNatsServer();
    const settings = (node: string, serverId: string): Json => ({
      ...memberSettings(nats.url, dir, node, serverId, { failure_seconds: 3 }),
      config_objects: {
        res_pjsip: {
          transport: { 'transport-tls': { protocol: 'tls', bind: '127.0.0.1:0', cert_file: cert.cert, priv_key_file: cert.key, ca_list_file: ca.cert, method: 'sslv23' } },
          endpoint: { alice: { context: 'phones', allow: 'ulaw', aors: 'alice', transport: 'transport-tls' } },
          aor: { alice: { max_contacts: 1, remove_existing: 'yes' } },
        },
      },
    });
    a = await startTestServer(settings('nodeA', '02:00:00:00:5a:01'));
    b = await startTestServer(settings('nodeB', '02:00:00:00:5b:01'));
    await until('the members know each other', async () => (await status(a)).members.length === 2 && (await status(b)).members.length === 2);
    const tlsPort = a.core.pjsip.listeners().find((listener) => listener.protocol === 'TLS')?.port;
    assert.ok(tlsPort, 'A listens for TLS');
    const home = writeBaresipHome(dir, { phone: await freeSipPhonePort(), ctrl: await freePort() }, [`sip_cafile ${ca.cert}`]);
    writeFileSync(join(home, 'accounts'), `<sip:alice@127.0.0.1:${tlsPort};transport=tls>;audio_codecs=PCMU;regint=60;answermode=auto\n`);
    baresip = spawn('baresip', ['-f', home], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    baresip.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    baresip.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await until('B knows the TLS contact registered on A', async () => (await status(b)).contacts.known_elsewhere === 1, 30_000).catch((error: unknown) => {
      showBaresipOutput(output);
      throw error;
    });
  });

  after(async () => {
    await stopBaresip(baresip);
    await b?.stop();
    await a?.stop();
    await nats?.stop();
    ca?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it("B's call reaches baresip over A's TLS connection; RTP with B both ways", async () => {
    try {
      const created = await b.ari('/channels?endpoint=PJSIP/alice&extension=echo&context=phones&channelId=tls-relay', { method: 'POST' });
      assert.equal(created.status, 200, await created.clone().text());
      await until('the call is up on B', async () => (await channelOnB('tls-relay'))?.state === 'Up', 20_000);
      assert.equal(a.core.channels.size, 0, 'A holds no channel: it only lent its TLS connection');
      assert.equal((await status(b)).relayed_dialogs.through_others, 1);
      await until('RTP both ways between baresip and B', async () => {
        const statistics = (await (await b.ari('/channels/tls-relay/rtp_statistics')).json()) as Json;
        return statistics.rxcount > 50 && statistics.txcount > 50;
      });
      assert.equal((await b.ari('/channels/tls-relay', { method: 'DELETE' })).status, 204);
      await until('no relayed dialog left', async () => (await status(b)).relayed_dialogs.through_others === 0 && (await status(a)).relayed_dialogs.lent === 0);
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    }
  });
});
