// SIP over TLS with a real softphone, baresip 1.0: Patchbay has only a protocol=tls transport (a
// certificate from a CA made at test time); baresip, trusting that CA (sip_cafile), registers over
// TLS with digest, is qualified (OPTIONS) over it, calls 100 into a Stasis application over it, and
// then is called by Patchbay (ARI originate to PJSIP/alice) on the connection it registered over —
// as pjsip calls a TLS phone back (flow reuse: the phone listens elsewhere, or not at all, behind NAT).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { aliceAccount, aliceWithDigest, ctrl, HAVE_BARESIP, type Json, nextOfType, showBaresipOutput, spawnBaresip, stopBaresip, waitFor, writeBaresipHome } from '../helpers/baresip.ts';
import { freePort, freeSipPhonePort } from '../helpers/ports.ts';
import { startTestServer, type EventSocket } from '../helpers/server.ts';
import { makeTestCa, NO_OPENSSL } from '../helpers/tls-certs.ts';

test(
  'baresip registers over TLS, calls into Stasis over it, and is called back on its TLS connection',
  { timeout: 90_000, skip: HAVE_BARESIP ? NO_OPENSSL : 'baresip is not installed (Debian package baresip)' },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'patchbay-baresip-tls-'));
    const ca = await makeTestCa();
    const serverCert = await ca.issue('patchbay', 'DNS:localhost,IP:127.0.0.1');
    const dialplanFile = join(work, 'extensions.conf');
    writeFileSync(dialplanFile, '[sip-in]\nexten => 100,1,Stasis(tls-app)\n');
    const server = await startTestServer({
      dialplan: { file: dialplanFile },
      config_objects: {
        res_pjsip: {
          transport: { 'transport-tls': { protocol: 'tls', bind: '127.0.0.1:0', cert_file: serverCert.cert, priv_key_file: serverCert.key, ca_list_file: ca.cert, method: 'sslv23' } },
          // Qualified every second: the OPTIONS go over her TLS connection too.
          ...aliceWithDigest({ qualify_frequency: 1 }, { transport: 'transport-tls' }),
        },
      },
    });
    let baresip: ChildProcess | undefined;
    let output = '';
    let events: EventSocket | undefined;
    try {
      const listener = server.core.pjsip.listeners().find((entry) => entry.protocol === 'TLS');
      assert.ok(listener?.port, 'a TLS listener');
      const sipPort = listener.port;
      const [phonePort, ctrlPort] = [await freeSipPhonePort(), await freePort()];
      const home = writeBaresipHome(work, { phone: phonePort, ctrl: ctrlPort }, [`sip_cafile ${ca.cert}`]);
      writeFileSync(join(home, 'accounts'), aliceAccount(sipPort, 'tls', ';answermode=auto'));

      events = await server.events('app=tls-app');
      assert.equal((await server.ari('/applications/tls-app/subscription?eventSource=endpoint:PJSIP/alice', { method: 'POST' })).status, 200);
      baresip = spawnBaresip(home, work, (text) => (output += text));

      const endpoint = await waitFor('PJSIP/alice online', async () => {
        const found = (await (await server.ari('/endpoints/PJSIP/alice')).json()) as Json;
        return found.state === 'online' ? found : undefined;
      });
      assert.equal(endpoint.state, 'online');
      assert.equal((await nextOfType(events, 'ContactStatusChange')).contact_info.contact_status, 'Unknown');
      const reachable = await nextOfType(events, 'ContactStatusChange');
      assert.equal(reachable.contact_info.contact_status, 'Reachable', JSON.stringify(reachable.contact_info));
      assert.match(reachable.contact_info.uri, /;transport=tls/i);
      server.core.pjsip.sipTrace.enable('');

      // baresip → Patchbay over TLS into Stasis (baresip adds the account's ;transport=tls to what it dials).
      const dialed = await waitFor('ctrl_tcp', () => ctrl(ctrlPort, 'dial', `sip:100@127.0.0.1:${sipPort}`).catch(() => undefined));
      assert.equal(dialed.ok, true, JSON.stringify(dialed));
      const start = await nextOfType(events, 'StasisStart');
      const inbound = start.channel as Json;
      assert.match(inbound.name, /^PJSIP\/alice-/);
      assert.equal((await server.ari(`/channels/${inbound.id}/answer`, { method: 'POST' })).status, 204);
      await waitFor('the inbound call up', async () => {
        const channel = (await (await server.ari(`/channels/${inbound.id}`)).json()) as Json;
        return channel.state === 'Up' ? channel : undefined;
      });
      assert.equal((await server.ari(`/channels/${inbound.id}`, { method: 'DELETE' })).status, 204);
      await nextOfType(events, 'ChannelDestroyed', inbound.id);

      // Patchbay → baresip: to its registered contact, over the TLS connection it registered on
      // (baresip answers by itself: answermode=auto).
      const originate = await server.ari('/channels?endpoint=PJSIP/alice&app=tls-app', { method: 'POST' });
      assert.equal(originate.status, 200, await originate.clone().text());
      const outbound = (await originate.json()) as Json;
      const answered = await nextOfType(events, 'StasisStart', outbound.id);
      assert.equal(answered.channel.state, 'Up');
      assert.equal((await server.ari(`/channels/${outbound.id}`, { method: 'DELETE' })).status, 204);
      await nextOfType(events, 'ChannelDestroyed', outbound.id);
      // The INVITE went to the port baresip's requests came from (its connection), not to its Contact.
      const traced = server.logLines.map((line) => String((JSON.parse(line) as Json).msg ?? ''));
      const fromPhone = traced.map((text) => /^SIP received from TLS 127\.0\.0\.1:(\d+)\nINVITE sip:100@/.exec(text)?.[1]).find(Boolean);
      const toPhone = traced.map((text) => /^SIP sent to TLS 127\.0\.0\.1:(\d+)\nINVITE sip:/.exec(text)?.[1]).find(Boolean);
      assert.ok(fromPhone && toPhone, 'both INVITEs traced');
      assert.equal(toPhone, fromPhone, 'called back over the connection it opened');
      assert.notEqual(Number(toPhone), phonePort + 1, "not a new connection to baresip's own TLS port");
    } catch (error) {
      showBaresipOutput(output);
      throw error;
    } finally {
      await stopBaresip(baresip);
      await events?.close();
      await server.stop();
      ca.remove();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
