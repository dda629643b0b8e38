// pjsip.conf as Asterisk reads it, checked with a real peer (SIPp): an Asterisk configuration
// directory whose transports bind UDP and TCP on chosen ports serves SIP on exactly those ports;
// a section that inherits a template overrides the template's single-valued options (context,
// dtmf_mode, callerid) and adds to its list options (allow); an identify's match_header
// identifies a caller by a header; every option parsed but not implemented is a start-up warning.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { sippListening } from './sipp-peer.ts';

const SCENARIOS = fileURLToPath(new URL('../sip/scenarios/', import.meta.url));
const HAVE_SIPP = spawnSync('sipp', ['-v'], { encoding: 'utf8' }).error === undefined;

/** Fixed ports (the point is that pjsip.conf chooses them), away from the usual ones. */
const UDP_PORT = 15000 + Math.floor(Math.random() * 10000);
const TCP_PORT = UDP_PORT + 1;
/** Where SIPp plays bob's phone (bob's static contact, which names no transport). */
const BOB_PORT = 40000 + Math.floor(Math.random() * 20000);

type Json = Record<string, any>;

let work: string;
let server: TestServer;
let events: EventSocket;

function sipp(scenario: string, target: string | undefined, args: string[], timeoutMs = 15_000, port = 40000 + Math.floor(Math.random() * 20000)): Promise<{ status: number | null; output: string }> {
  const file = scenario.includes('/') ? scenario : join(SCENARIOS, scenario);
  const child = spawn('sipp', [...(target ? [target] : []), '-sf', file, '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin', '-timeout', `${Math.round(timeoutMs / 1000)}s`, '-timeout_error', ...args], { cwd: work });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (status) => resolve({ status, output: output.slice(-2000) })));
}

async function nextEvent(match: (event: Json) => boolean, timeoutMs = 10_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await events.next(Math.max(1, deadline - Date.now()))) as Json;
    if (match(event)) return event;
  }
}

function writeAsteriskDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'extensions.conf'),
    ['[from-phones]', 'exten => 100,1,Stasis(conf-app,phones)', '[vip]', 'exten => 100,1,Stasis(conf-app,vip)', '[from-acme]', 'exten => 100,1,Stasis(conf-app,acme)', ''].join('\n'),
  );
  writeFileSync(
    join(dir, 'pjsip.conf'),
    [
      '[transport-udp]',
      'type = transport',
      'protocol = udp',
      `bind = 127.0.0.1:${UDP_PORT}`,
      '',
      '[transport-tcp]',
      'type = transport',
      'protocol = tcp',
      `bind = 127.0.0.1:${TCP_PORT}`,
      '',
      '[phone](!)',
      'type = endpoint',
      'context = from-phones',
      'disallow = all',
      'allow = ulaw',
      'dtmf_mode = rfc4733',
      'callerid = "Phone" <100>',
      '',
      '[alice](phone)',
      'auth = alice',
      'aors = alice',
      '',
      '[alice]',
      'type = auth',
      'username = alice',
      'password = wonderland',
      '',
      '[alice]',
      'type = aor',
      'max_contacts = 1',
      '',
      '[vip](phone)',
      'context = vip',
      'dtmf_mode = info',
      'callerid = "VIP" <200>',
      'allow = alaw',
      'trust_id_outbound = yes',
      'media_address = 127.0.0.1',
      '',
      '[bob](phone)',
      'aors = bob',
      'transport = transport-tcp',
      '',
      '[bob]',
      'type = aor',
      `contact = sip:bob@127.0.0.1:${BOB_PORT}`,
      '',
      '[acme]',
      'type = endpoint',
      'context = from-acme',
      'allow = ulaw',
      '',
      '[acme]',
      'type = identify',
      'endpoint = acme',
      'match_header = X-Trunk-Id: acme-1',
      'srv_lookups = no',
      '',
    ].join('\n'),
  );
}

describe('pjsip.conf with a real peer', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-pjsipconf-'));
    const dir = join(work, 'etc-asterisk');
    writeAsteriskDir(dir);
    server = await startTestServer({ asterisk_config_dir: dir } as never);
    events = await server.events('app=conf-app');
  });

  after(async () => {
    await events?.close();
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  test('each transport listens where its bind says: OPTIONS over UDP and TCP, REGISTER over UDP', async () => {
    const udp = await sipp('options.xml', `127.0.0.1:${UDP_PORT}`, []);
    assert.equal(udp.status, 0, udp.output);
    const tcp = await sipp('options.xml', `127.0.0.1:${TCP_PORT}`, ['-t', 't1']);
    assert.equal(tcp.status, 0, tcp.output);
    assert.deepEqual(
      server.core.pjsip.listeners().map(({ name, protocol, port }) => [name, protocol, port]).sort(([a], [b]) => String(a).localeCompare(String(b))),
      [
        ['transport-tcp', 'TCP', TCP_PORT],
        ['transport-udp', 'UDP', UDP_PORT],
      ],
    );
    const register = await sipp('register-digest.xml', `127.0.0.1:${UDP_PORT}`, ['-s', 'alice', '-au', 'alice', '-ap', 'wonderland']);
    assert.equal(register.status, 0, register.output);
  });

  test("a section overrides its template's single-valued options and adds to allow", async () => {
    const response = await server.ari('/asterisk/config/dynamic/res_pjsip/endpoint/vip');
    assert.equal(response.status, 200);
    const fields = Object.fromEntries(((await response.json()) as { attribute: string; value: string }[]).map(({ attribute, value }) => [attribute, value]));
    assert.equal(fields.context, 'vip');
    assert.equal(fields.dtmf_mode, 'info');
    assert.equal(fields.callerid, '"VIP" <200>');
    assert.equal(server.core.pjsip.config.endpoints.get('vip')?.context, 'vip');
    assert.deepEqual(server.core.pjsip.config.endpoints.get('vip')?.codecs, ['ulaw', 'alaw']);

    // The call from vip runs in vip's own context.
    const call = sipp('call-header-bye.xml', `127.0.0.1:${UDP_PORT}`, ['-s', '100', '-set', 'caller', 'vip', '-set', 'header', 'X-Note: none', '-d', '1000']);
    const start = await nextEvent((event) => event.type === 'StasisStart');
    assert.deepEqual(start.args, ['vip']);
    assert.equal(start.channel.dialplan.context, 'vip');
    assert.equal((await server.ari(`/channels/${start.channel.id}/answer`, { method: 'POST' })).status, 204);
    const run = await call;
    assert.equal(run.status, 0, run.output);
  });

  test('identify by match_header: a caller no username or address names is identified by its header', async () => {
    const call = sipp('call-header-bye.xml', `127.0.0.1:${UDP_PORT}`, ['-s', '100', '-set', 'caller', 'stranger', '-set', 'header', 'X-Trunk-Id: acme-1', '-d', '1000']);
    const start = await nextEvent((event) => event.type === 'StasisStart');
    assert.deepEqual(start.args, ['acme']);
    assert.match(start.channel.name, /^PJSIP\/acme-/);
    assert.equal((await server.ari(`/channels/${start.channel.id}/answer`, { method: 'POST' })).status, 204);
    const run = await call;
    assert.equal(run.status, 0, run.output);
  });

  test("an endpoint's transport= picks the socket and protocol: the INVITE to bob's contact goes over TCP from the TCP transport", { timeout: 60_000 }, async () => {
    // bob's phone: answers only an INVITE whose Via names the TCP transport's address (else the call fails).
    const scenario = join(work, 'answer-via-tcp.xml');
    writeFileSync(scenario, answerCheckingVia(`SIP/2.0/TCP 127\\.0\\.0\\.1:${TCP_PORT};`));
    const phone = sipp(scenario, undefined, ['-t', 't1'], 20_000, BOB_PORT);
    // bob's TCP port listens before the INVITE's connection is tried (refused at once, else).
    await Promise.race([sippListening(BOB_PORT, 20_000, 'tcp'), phone]);
    const response = await server.ari('/channels?endpoint=PJSIP/bob&app=conf-app&appArgs=dialled', { method: 'POST' });
    const channel = (await response.json()) as Json;
    assert.equal(response.status, 200, JSON.stringify(channel));
    const start = await nextEvent((event) => event.type === 'StasisStart' && event.channel?.id === channel.id, 15_000).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; the phone says:\n${(await phone).output}`);
    });
    assert.equal(start.channel.state, 'Up');
    assert.equal((await server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
    const run = await phone;
    assert.equal(run.status, 0, run.output);
  });

  test('options parsed but not implemented are named in start-up warnings', () => {
    const warnings = server.logLines.filter((line) => /"level":40/.test(line)).join('\n');
    assert.match(warnings, /identify option 'srv_lookups' is not implemented by Patchbay; ignored/);
    // trust_id_outbound is implemented (a restricted caller's identity headers): set on vip, never warned about.
    assert.doesNotMatch(warnings, /option 'trust_id_outbound' is not implemented/);
    // media_address is implemented (the endpoint's SDP address): set in the section, never warned about.
    assert.doesNotMatch(warnings, /option 'media_address' is not implemented/);
    // callerid is implemented (the endpoint's caller id on its calls): set in the section, never warned about.
    assert.doesNotMatch(warnings, /option 'callerid' is not implemented/);
  });
});

/** A UAS that checks the INVITE's top Via against `via` (a regular expression), answers, and takes the BYE. */
function answerCheckingVia(via: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<scenario name="answer if the Via is right">
  <recv request="INVITE" rrs="true">
    <action>
      <ereg regexp="${via}" search_in="hdr" header="Via:" check_it="true" assign_to="via"/>
    </action>
  </recv>
  <send retrans="500">
    <![CDATA[
      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:];tag=[pid]SIPpTag01[call_number]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:bob@[local_ip]:[local_port];transport=[transport]>
      X-Checked-Via: [$via]
      Content-Type: application/sdp
      Content-Length: [len]

      v=0
      o=sipp 1 1 IN IP[local_ip_type] [local_ip]
      s=-
      c=IN IP[media_ip_type] [media_ip]
      t=0 0
      m=audio [media_port] RTP/AVP 0
      a=rtpmap:0 PCMU/8000
      a=sendrecv

    ]]>
  </send>
  <recv request="ACK"/>
  <recv request="BYE"/>
  <send>
    <![CDATA[
      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Content-Length: 0

    ]]>
  </send>
</scenario>
`;
}
