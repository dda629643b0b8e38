// The aor and registration options of res_pjsip a peer sees on the wire, with SIPp playing phones,
// an edge proxy and a provider's registrar: remove_unavailable (a REGISTER beyond max_contacts
// replaces a contact whose qualify failed, where a plain AOR refuses it), qualify_2xx_only (a 404 to
// the OPTIONS is Unreachable), the qualify challenge answered with the endpoint's outbound_auth,
// support_path (Path echoed with Supported: path, a Path without it refused 420, the qualify sent to
// the Path's first hop with the Path as Route) and a registration's user_agent,
// contact_header_params and support_path in its REGISTER.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, nextEvent, randomPort, sipp, startSippServer, tracedMessages, type Json, type SippServer } from './sipp-peer.ts';

const skip = HAVE_SIPP ? false : 'SIPp is not installed';

/** A contact that never answers its OPTIONS is Unreachable after this (seconds); qualified every second. */
const QUALIFY = { qualify_frequency: '1', qualify_timeout: '1' };

let peer: SippServer;
let registrar: ReturnType<typeof sipp>;
let registrarPort: number;
let registrarWork: string;
const seen: Json[] = [];

/** The next ContactStatusChange of `aor` with `status` (events kept in `seen` are looked at first). */
/** Creates (or replaces) the AOR `id` through ARI's dynamic configuration. */
async function putAor(id: string, fields: Record<string, string>): Promise<void> {
  const body = JSON.stringify({ fields: Object.entries(fields).map(([attribute, value]) => ({ attribute, value })) });
  const response = await peer.server.ari(`/asterisk/config/dynamic/res_pjsip/aor/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
  assert.equal(response.status, 200, await response.text());
}

async function contactStatus(aor: string, status: string, uri?: string): Promise<Json> {
  const matches = (event: Json) => event.type === 'ContactStatusChange' && event.contact_info?.aor === aor && event.contact_info?.contact_status === status && (uri === undefined || event.contact_info?.uri.includes(uri));
  const earlier = seen.findIndex(matches);
  if (earlier >= 0) return seen.splice(earlier, 1)[0];
  return nextEvent(peer.events, (event) => (matches(event) ? true : (seen.push(event), false)), 60_000);
}

before(async () => {
  if (!HAVE_SIPP) return;
  // The provider's registrar listens before the server starts and registers (max_random_initial_delay 0).
  registrarPort = randomPort();
  registrarWork = mkdtempSync(join(tmpdir(), 'patchbay-registrar-options-'));
  registrar = sipp('registrar-options.xml', [], { cwd: registrarWork, port: registrarPort, timeoutMs: 90_000 });
  await registrar.listening;
  peer = await startSippServer(
    'aor-options',
    '[phones]\nexten => 100,1,Hangup()\n',
    {
      endpoint: {
        flaky: { context: 'phones', allow: 'ulaw', aors: 'flaky' },
        strict: { context: 'phones', allow: 'ulaw', aors: 'strict' },
        picky: { context: 'phones', allow: 'ulaw', aors: 'picky' },
        guarded: { context: 'phones', allow: 'ulaw', aors: 'guarded', outbound_auth: 'qualauth' },
        edge: { context: 'phones', allow: 'ulaw', aors: 'edge' },
      },
      aor: {
        flaky: { max_contacts: '1', remove_unavailable: 'yes', ...QUALIFY },
        strict: { max_contacts: '1', ...QUALIFY },
        edge: { max_contacts: '2', support_path: 'yes', qualify_frequency: '1', qualify_timeout: '5' },
      },
      auth: { qualauth: { auth_type: 'userpass', username: 'qualuser', password: 'qualpass' } },
      registration: {
        provider: {
          server_uri: `sip:127.0.0.1:${registrarPort}`,
          client_uri: `sip:trunk@127.0.0.1:${registrarPort}`,
          user_agent: 'RegAgent/2.0',
          contact_header_params: 'reg-id=1;+sip.instance="<urn:uuid:00000000-0000-1000-8000-000A95A0E128>"',
          support_path: 'yes',
          max_random_initial_delay: '0',
          expiration: '120',
        },
      },
    },
    'aor-options-app',
  );
});

after(async () => {
  if (!HAVE_SIPP) return;
  await peer.close();
  await registrar.done;
  rmSync(registrarWork, { recursive: true, force: true });
});

describe('aor options on the wire', { skip }, () => {
  test('remove_unavailable: a new REGISTER replaces the contact whose qualify failed; without it the AOR refuses (403)', async () => {
    // Two phones register and go away: their OPTIONS are not answered.
    for (const aor of ['flaky', 'strict']) {
      const first = await sipp('register-contact.xml', [peer.target(), '-s', aor], { cwd: peer.work }).done;
      assert.equal(first.status, 0, first.output);
    }
    await contactStatus('flaky', 'Unreachable');
    await contactStatus('strict', 'Unreachable');
    const replacing = await sipp('register-contact.xml', [peer.target(), '-s', 'flaky'], { cwd: peer.work }).done;
    assert.equal(replacing.status, 0, replacing.output);
    const refused = await sipp('register-contact-refused.xml', [peer.target(), '-s', 'strict'], { cwd: peer.work }).done;
    assert.equal(refused.status, 0, refused.output);
  });

  test('qualify_2xx_only: a 404 to the OPTIONS makes the contact Unreachable', async () => {
    const contact = randomPort();
    const answering = sipp('options-answer-404.xml', [peer.target()], { cwd: peer.work, port: contact, timeoutMs: 60_000 });
    await answering.listening;
    await putAor('picky', { contact: `sip:picky@127.0.0.1:${contact}`, qualify_frequency: '1', qualify_timeout: '5', qualify_2xx_only: 'yes' });
    const status = await contactStatus('picky', 'Unreachable', String(contact));
    const run = await answering.done;
    assert.equal(run.status, 0, run.output);
    assert.equal(status.contact_info.roundtrip_usec, '0');
  });

  test("a challenged qualify is answered with the endpoint's outbound_auth, and the contact is Reachable", async () => {
    const contact = randomPort();
    const answering = sipp('options-challenge-uas.xml', [peer.target()], { cwd: peer.work, port: contact, timeoutMs: 60_000 });
    await answering.listening;
    await putAor('guarded', { contact: `sip:guarded@127.0.0.1:${contact}`, qualify_frequency: '1', qualify_timeout: '10', qualify_2xx_only: 'yes', authenticate_qualify: 'yes' });
    await contactStatus('guarded', 'Reachable', String(contact));
    const run = await answering.done;
    assert.equal(run.status, 0, run.output);
  });

  test('support_path: the Path comes back with Supported: path, and the qualify goes to its first hop with the Path as Route', async () => {
    const proxyPort = randomPort();
    const proxy = sipp('options-answer.xml', [peer.target()], { cwd: peer.work, port: proxyPort, timeoutMs: 60_000, trace: true });
    await proxy.listening;
    const phone = await sipp('register-path.xml', [peer.target(), '-s', 'edge', '-set', 'path_port', String(proxyPort)], { cwd: peer.work }).done;
    assert.equal(phone.status, 0, phone.output);
    const run = await proxy.done;
    assert.equal(run.status, 0, run.output);
    const [options] = tracedMessages(run, /^OPTIONS /);
    assert.ok(options, run.messages);
    assert.match(options.split(/\r?\n/)[0], /^OPTIONS sip:edge@127\.0\.0\.1:\d+ SIP\/2\.0$/);
    assert.match(options, new RegExp(`^Route: <sip:127\\.0\\.0\\.1:${proxyPort};lr>\\r?$`, 'm'));
    const refused = await sipp('register-path-unsupported.xml', [peer.target(), '-s', 'edge'], { cwd: peer.work }).done;
    assert.equal(refused.status, 0, refused.output);
  });

  test("registration: the REGISTER carries the registration's user_agent, contact_header_params and Supported: path", async () => {
    const run = await registrar.done;
    assert.equal(run.status, 0, run.output);
  });
});
