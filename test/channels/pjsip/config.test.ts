import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readConfigSections } from '../../../src/config/conf/reader.ts';
import { DialplanSyntaxError } from '../../../src/config/conf/syntax-error.ts';
import { buildPjsipConfig, buildPjsipObject, identifyMatchesAddress, loadPjsipConf, readPjsipConf } from '../../../src/channels/pjsip/config/index.ts';

const PJSIP_CONF = `
;-- A realistic pjsip.conf: a softphone with auth+aor, a carrier trunk with
    identify and outbound registration, templates. --;
[global]
type=global
endpoint_identifier_order=ip,username
default_realm=patchbay.example

[transport-udp]
type=transport
protocol=udp
bind=0.0.0.0:5060
external_media_address=203.0.113.1
external_signaling_address=203.0.113.1
local_net=192.168.0.0/16
local_net=10.0.0.0/255.0.0.0

[transport-flow]
type=transport
protocol=flow
bind=0.0.0.0:5061

#include pjsip_extra.conf

; --- templates ---
[phone-endpoint](!)
type=endpoint
context=from-phones
disallow=all
allow=ulaw
allow=alaw,g729
dtmf_mode=rfc4733
direct_media=no
rtp_symmetric=yes
force_rport=yes
rewrite_contact=yes

[phone-aor](!)
type=aor
max_contacts=1
remove_existing=yes
qualify_frequency=60

; --- alice, a softphone ---
[alice](phone-endpoint)
auth=alice
aors=alice
callerid="Alice Liddell" <1001>
message_context=messages
allow=!alaw
language=en
one_touch_recording=yes

[alice]
type=auth
auth_type=userpass
username=alice
password=wonder\\;land ; the escaped semicolon is part of the password

[alice](phone-aor)
max_contacts=2

; --- bob with md5_cred ---
[bob](phone-endpoint)
auth=bob-auth
aors=bob
dtmf_mode=info

[bob-auth]
type=auth
auth_type=md5
username=bob
realm=patchbay.example
md5_cred=0123456789ABCDEF0123456789abcdef

[bob](phone-aor)

; --- a carrier trunk ---
[trunk]
type=endpoint
context=from-trunk
disallow=all
allow=alaw
outbound_auth=trunk-auth
aors=trunk
from_user=5551234
from_domain=sip.carrier.example
direct_media=yes
refer_blind_progress=no

[trunk]
type=aor
contact=sip:sip.carrier.example:5060
contact => sip:backup.carrier.example

[trunk-auth]
type=auth
username=5551234
password=trunkpass

[trunk]
type=identify
endpoint=trunk
match=198.51.100.0/24
match=203.0.113.7,2001:db8:1::/48
match=sip.carrier.example

[trunk-reg]
type=registration
server_uri=sip:sip.carrier.example
client_uri=sip:5551234@sip.carrier.example
contact_user=5551234
outbound_auth=trunk-auth
retry_interval=60
expiration=600

[patchbay.example]
type=domain_alias
domain=pbx.local

[prov-1]
type=phoneprov
MAC=000000000000

[oddity]
type=frobnicator
x=1
`;

describe('pjsip.conf', () => {
  const { config, errors, warnings } = loadPjsipConf(PJSIP_CONF, 'pjsip.conf');

  test('a realistic file loads without errors', () => {
    assert.deepEqual(errors, []);
  });

  test('templates, inheritance, repeated allow and !codec', () => {
    const alice = config.endpoints.get('alice');
    assert.ok(alice);
    assert.equal(alice.context, 'from-phones');
    assert.deepEqual(alice.codecs, ['ulaw']);
    assert.deepEqual(alice.auth, ['alice']);
    assert.deepEqual(alice.aors, ['alice']);
    assert.deepEqual(alice.callerId, { name: 'Alice Liddell', number: '1001' });
    assert.equal(alice.messageContext, 'messages');
    assert.equal(alice.dtmfMode, 'rfc4733');
    assert.equal(alice.rtpSymmetric, true);
    assert.equal(alice.language, 'en');
    const bob = config.endpoints.get('bob');
    assert.deepEqual(bob?.codecs, ['ulaw', 'alaw']);
    assert.equal(bob?.dtmfMode, 'info');
    assert.equal(config.endpoints.has('phone-endpoint'), false);
  });

  test('aors, auths (userpass with an escaped semicolon, md5_cred)', () => {
    assert.equal(config.aors.get('alice')?.maxContacts, 2);
    assert.equal(config.aors.get('alice')?.removeExisting, true);
    assert.equal(config.aors.get('bob')?.maxContacts, 1);
    assert.equal(config.aors.get('bob')?.qualifyFrequency, 60);
    assert.deepEqual(config.aors.get('trunk')?.contacts, ['sip:sip.carrier.example:5060', 'sip:backup.carrier.example']);
    assert.equal(config.aors.get('trunk')?.maxContacts, 0);
    assert.deepEqual(config.auths.get('alice'), {
      type: 'auth',
      id: 'alice',
      authType: 'userpass',
      username: 'alice',
      password: 'wonder;land',
      nonceLifetime: 32,
    });
    assert.equal(config.auths.get('bob-auth')?.md5Cred, '0123456789abcdef0123456789abcdef');
    assert.equal(config.auths.get('bob-auth')?.password, undefined);
  });

  test('trunk: identify with networks and a host, registration, endpoint', () => {
    const trunk = config.endpoints.get('trunk');
    assert.deepEqual(trunk?.codecs, ['alaw']);
    assert.deepEqual(trunk?.outboundAuth, ['trunk-auth']);
    assert.equal(trunk?.fromUser, '5551234');
    assert.equal(trunk?.directMedia, true, 'direct_media=yes is taken as written');
    const identify = config.identifies.get('trunk');
    assert.equal(identify?.endpoint, 'trunk');
    assert.equal(identify?.match.length, 4);
    assert.deepEqual(identify?.match[3], { kind: 'host', host: 'sip.carrier.example' });
    assert.equal(identifyMatchesAddress(identify!.match, '198.51.100.77'), true);
    assert.equal(identifyMatchesAddress(identify!.match, '::ffff:198.51.100.77'), true);
    assert.equal(identifyMatchesAddress(identify!.match, '203.0.113.7'), true);
    assert.equal(identifyMatchesAddress(identify!.match, '203.0.113.8'), false);
    assert.equal(identifyMatchesAddress(identify!.match, '2001:db8:1:ffff::1'), true);
    assert.equal(identifyMatchesAddress(identify!.match, '2001:db8:2::1'), false);
    const registration = config.registrations.get('trunk-reg');
    assert.equal(registration?.serverUri, 'sip:sip.carrier.example');
    assert.equal(registration?.expiration, 600);
    assert.deepEqual(registration?.outboundAuth, ['trunk-auth']);
    assert.equal(config.domainAliases.get('patchbay.example')?.domain, 'pbx.local');
  });

  test('transports and global', () => {
    const udp = config.transports.get('transport-udp');
    assert.equal(udp?.protocol, 'udp');
    assert.deepEqual(udp?.bind, { host: '0.0.0.0', port: 5060 });
    assert.equal(udp?.externalMediaAddress, '203.0.113.1');
    assert.deepEqual(
      udp?.localNet.map((net) => [net.text, net.prefix]),
      [
        ['192.168.0.0/16', 16],
        ['10.0.0.0/255.0.0.0', 8],
      ],
    );
    assert.equal(config.transports.has('transport-flow'), false);
    assert.deepEqual(config.global.endpointIdentifierOrder, ['ip', 'username']);
    assert.equal(config.global.defaultRealm, 'patchbay.example');
  });

  test('one warning line per thing not implemented, naming file:line', () => {
    const expect = (pattern: RegExp) => assert.ok(warnings.some((line) => pattern.test(line)), `a warning matching ${pattern}\n${warnings.join('\n')}`);
    expect(/^pjsip\.conf:23: #include is not supported by Patchbay; line ignored/);
    expect(/^pjsip\.conf:18: \[transport-flow\] protocol=flow is not implemented/);
    expect(/^pjsip\.conf:31: \[alice\] codec g729 is not supported by Patchbay/);
    expect(/^pjsip\.conf:52: \[alice\] endpoint option 'one_touch_recording' is not implemented by Patchbay; ignored$/);
    // direct_media=yes is implemented (docs/sip.md, Direct media): no warning names it.
    assert.equal(warnings.some((line) => /direct_media/.test(line)), false, warnings.join('\n'));
    expect(/^pjsip\.conf:\d+: \[trunk\] refer_blind_progress=no is not implemented/);
    expect(/^pjsip\.conf:\d+: \[prov-1\] type=phoneprov is not implemented by Patchbay/);
    expect(/^pjsip\.conf:\d+: \[oddity\] unknown type 'frobnicator'; section kept/);
    assert.equal(config.unknown.length, 1);
    assert.equal(config.unknown[0].id, 'oddity');
    for (const line of warnings) assert.doesNotMatch(line, /\n/);
  });
});

describe('preferred_codec_only', () => {
  const section = (extra: string) => `[phone]\ntype=endpoint\nallow=ulaw\npreferred_codec_only=yes\n${extra}`;
  test('alone or beside incoming_call_offer_pref=local it loads; beside another incoming preference the endpoint is refused, as Asterisk refuses it', () => {
    for (const extra of ['', 'incoming_call_offer_pref=local\n']) {
      const loaded = loadPjsipConf(section(extra), 'pjsip.conf');
      assert.deepEqual(loaded.errors, []);
      assert.equal(loaded.config.endpoints.get('phone')?.preferredCodecOnly, true);
    }
    for (const extra of ['incoming_call_offer_pref=remote_first\n', 'codec_prefs_incoming_offer=prefer: pending, operation: intersect, keep: all, transcode: allow\n']) {
      const refused = loadPjsipConf(section(extra), 'pjsip.conf');
      assert.ok(refused.errors.some((line) => /preferred_codec_only/.test(line)), `${extra}: ${refused.errors.join('\n')}`);
      assert.equal(refused.config.endpoints.has('phone'), false);
    }
  });
});

describe('refer_blind_progress', () => {
  test('yes (what Patchbay does) is taken without a warning; no is named', () => {
    const section = (value: string) => `[phone]\ntype=endpoint\nrefer_blind_progress=${value}\n`;
    const yes = loadPjsipConf(section('yes'), 'pjsip.conf');
    assert.deepEqual(yes.errors, []);
    assert.deepEqual(yes.warnings.filter((line) => line.includes('refer_blind_progress')), []);
    const no = loadPjsipConf(section('no'), 'pjsip.conf');
    assert.ok(no.warnings.some((line) => /\[phone\] refer_blind_progress=no is not implemented/.test(line)), no.warnings.join('\n'));
    assert.deepEqual(loadPjsipConf(section('maybe'), 'pjsip.conf').config.endpoints.has('phone'), false);
  });
});

describe('validation', () => {
  test('bad values are one-line errors naming file:line, object and key; the object is left out', () => {
    const { config, errors } = loadPjsipConf(
      `[a]
type=endpoint
dtmf_mode=morse
allow=ulaw,klingon
[a]
type=aor
max_contacts=-1
qualify_frequency=often
contact=http://nope
minimum_expiration=9000
[a]
type=auth
auth_type=md5
md5_cred=xyz
[t]
type=transport
bind=nowhere:99999
local_net=300.1.1.1/8
[r]
type=registration
[i]
type=identify
match=1.2.3.4/40
[g1]
type=global
[g2]
type=global
`,
      'pjsip.conf',
    );
    assert.deepEqual(errors, [
      "pjsip.conf:3: [a] dtmf_mode: 'morse' is not one of rfc4733, inband, info, auto, auto_info",
      "pjsip.conf:4: [a] allow: unknown codec 'klingon'",
      "pjsip.conf:7: [a] max_contacts: '-1' is not a whole number",
      "pjsip.conf:8: [a] qualify_frequency: 'often' is not a whole number",
      "pjsip.conf:9: [a] contact: 'http://nope' is not a sip: URI",
      'pjsip.conf:5: [a] minimum_expiration: 9000 is above maximum_expiration 7200',
      'pjsip.conf:11: [a] username: is required',
      'pjsip.conf:11: [a] md5_cred: auth_type=md5 needs md5_cred, 32 hexadecimal digits (MD5 of username:realm:password)',
      "pjsip.conf:17: [t] bind: port of 'nowhere:99999': 99999 is not between 1 and 65535",
      "pjsip.conf:18: [t] local_net: '300.1.1.1/8' is not an address or network",
      'pjsip.conf:19: [r] server_uri: is required',
      'pjsip.conf:19: [r] client_uri: is required',
      "pjsip.conf:23: [i] match: '1.2.3.4/40' is not an address, network or host name",
      'pjsip.conf:21: [i] endpoint: is required',
      'pjsip.conf:26: [g2] a second global section (the first was [g1])',
    ]);
    assert.equal(config.endpoints.size, 0);
    assert.equal(config.aors.size, 0);
  });

  test('syntax errors and hostile files are error lines, never exceptions', () => {
    assert.deepEqual(readPjsipConf('[a\ntype=endpoint', 'p.conf').errors, ["p.conf:1: section header is missing its closing ']'"]);
    assert.deepEqual(readPjsipConf('type=endpoint', 'p.conf').errors, ['p.conf:1: entry outside of any [section]']);
    assert.deepEqual(readPjsipConf('[a](nothere)\n', 'p.conf').errors, ['p.conf:1: cannot inherit from [nothere]: it does not exist yet']);
    assert.deepEqual(readPjsipConf(';-- open\n[a]\n', 'p.conf').errors, ["p.conf:1: block comment ';--' is never closed with '--;'"]);
    assert.match(readPjsipConf('x'.repeat(5 * 1024 * 1024), 'p.conf').errors[0], /larger than/);
    // Templates inheriting twice from each other double at every level: bounded, not an out-of-memory.
    let doubling = '[t0](!)\n' + 'a=1\n'.repeat(10);
    for (let i = 1; i < 40; i++) doubling += `[t${i}](!,t${i - 1},t${i - 1})\n`;
    const bomb = readPjsipConf(doubling, 'p.conf');
    assert.match(bomb.errors[0], /^p\.conf:\d+: too many entries/);
    assert.deepEqual(readPjsipConf('[x]\nfoo=bar\n', 'p.conf').warnings, ['p.conf:1: [x] has no type=; section ignored']);
    let seed = 3;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const alphabet = '[]()!,=>;-#\n\\ \tabc01:/."<>';
    for (let round = 0; round < 1500; round++) {
      const chars = [...PJSIP_CONF.slice(0, 1500)];
      for (let k = 0; k < 8; k++) chars[Math.floor(random() * chars.length)] = alphabet[Math.floor(random() * alphabet.length)];
      loadPjsipConf(chars.join(''), 'fuzz.conf');
    }
  });

  test('the dialplan still refuses directives and is bounded the same way', () => {
    assert.throws(() => readConfigSections('#include x\n', 'extensions.conf'), DialplanSyntaxError);
    assert.throws(() => readConfigSections('[a]\nx=1\nx=2\n', 'extensions.conf', { maxEntries: 1 }), /too many entries/);
  });
});

describe('objects from YAML or dynamic configuration', () => {
  test('record fields use the same names and validation', () => {
    const endpoint = buildPjsipObject({
      type: 'endpoint',
      id: 'carol',
      fields: { allow: 'alaw,ulaw', disallow: 'all', context: 'phones', direct_media: false, rtp_timeout: 30 },
      where: 'config_objects.res_pjsip.endpoint.carol',
    });
    assert.deepEqual(endpoint.errors, []);
    assert.equal(endpoint.value?.type, 'endpoint');
    assert.deepEqual(endpoint.value?.type === 'endpoint' && endpoint.value.codecs, ['alaw', 'ulaw']);
    assert.equal(endpoint.value?.type === 'endpoint' && endpoint.value.rtpTimeout, 30);

    const bad = buildPjsipObject({ type: 'aor', id: 'carol', fields: { max_contacts: 'lots' } });
    assert.deepEqual(bad.errors, ["res_pjsip/aor/carol: [carol] max_contacts: 'lots' is not a whole number"]);
    assert.equal(bad.value, undefined);

    const hostile = buildPjsipObject({
      type: 'endpoint',
      id: 'x',
      fields: { __proto__: 'a', constructor: 'b', context: 'c\r\nInjected: yes', allow: 'ulaw' } as unknown as Record<string, string>,
    });
    assert.deepEqual(hostile.errors, ['res_pjsip/endpoint/x: [x] context: is not a text value']);
    assert.equal(buildPjsipObject({ type: 'endpoint', id: '', fields: {} }).errors.length, 1);
    assert.equal(buildPjsipObject({ type: 'endpoint', id: 'y', fields: null as unknown as Record<string, string> }).errors.length, 0);
  });

  test('a set from several sources: duplicates are errors, dangling references warnings', () => {
    const { value, errors, warnings } = buildPjsipConfig([
      { type: 'endpoint', id: 'dave', fields: { allow: 'ulaw', aors: 'dave', auth: 'dave' } },
      { type: 'endpoint', id: 'dave', fields: { allow: 'ulaw' }, where: 'dynamic' },
      { type: 'auth', id: 'dave', fields: { username: 'dave', password: 'x' } },
    ]);
    assert.deepEqual(errors, ['dynamic: [dave] a second endpoint with this name']);
    assert.deepEqual(warnings, ["[dave] endpoint aors: no aor named 'dave'"]);
    assert.equal(value.endpoints.size, 1);
    assert.equal(value.global.defaultRealm, 'asterisk');
  });
});

describe('endpoint media and SDP options (sdp_owner, sdp_session, use_ptime, force_avp, asymmetric_rtp_codec, max_*_streams, bind_rtp_to_media_address)', () => {
  const load = (extra: string) => loadPjsipConf(`[phone]\ntype=endpoint\nallow=ulaw\n${extra}`, 'pjsip.conf');
  test("defaults: o= user '-', s= Patchbay, use_ptime no, one stream each, nothing named", () => {
    const loaded = load('');
    const phone = loaded.config.endpoints.get('phone')!;
    assert.equal(phone.sdpOwner, '-');
    assert.equal(phone.sdpSession, 'Patchbay');
    assert.equal(phone.usePtime, false);
    assert.equal(phone.forceAvp, false);
    assert.equal(phone.asymmetricRtpCodec, false);
    assert.equal(phone.maxAudioStreams, 1);
    assert.equal(phone.maxVideoStreams, 1);
    assert.equal(phone.bindRtpToMediaAddress, false);
    assert.deepEqual(loaded.warnings, []);
  });

  test('values are taken; an o= user with a space or any control character refuses the endpoint', () => {
    const loaded = load('sdp_owner=pbx\nsdp_session=Call Centre\nforce_avp=yes\nbind_rtp_to_media_address=yes\nmedia_address=127.0.0.1\nmax_audio_streams=1\nmax_video_streams=0\n');
    assert.deepEqual(loaded.errors, []);
    assert.deepEqual(loaded.warnings, []);
    const phone = loaded.config.endpoints.get('phone')!;
    assert.equal(phone.sdpOwner, 'pbx');
    assert.equal(phone.sdpSession, 'Call Centre');
    assert.equal(phone.forceAvp, true);
    assert.equal(phone.bindRtpToMediaAddress, true);
    assert.equal(phone.maxVideoStreams, 0);
    for (const bad of ['sdp_owner=two words\n', 'sdp_session=a\u0007b\n', 'max_audio_streams=-1\n', 'max_video_streams=lots\n', 'use_ptime=maybe\n']) {
      assert.equal(load(bad).config.endpoints.has('phone'), false, bad);
    }
  });

  test('what Patchbay does only in part is named: use_ptime=yes (20 ms packets), asymmetric_rtp_codec=yes, more than one audio or any video stream, media_use_received_transport, rtp_ipv6', () => {
    const loaded = load('use_ptime=yes\nasymmetric_rtp_codec=yes\nmax_audio_streams=2\nmax_video_streams=1\nmedia_use_received_transport=yes\nrtp_ipv6=yes\n');
    assert.deepEqual(loaded.errors, []);
    const phone = loaded.config.endpoints.get('phone')!;
    assert.equal(phone.usePtime, true);
    assert.equal(phone.maxAudioStreams, 2);
    const named = (pattern: RegExp) => assert.ok(loaded.warnings.some((line) => pattern.test(line)), `${pattern}: ${loaded.warnings.join('\n')}`);
    named(/use_ptime=yes: .*20 ms/);
    named(/asymmetric_rtp_codec=yes is not implemented/);
    named(/max_audio_streams=2: Patchbay carries 1 audio stream/);
    named(/max_video_streams=1: Patchbay carries no video streams/);
    named(/media_use_received_transport.* is not implemented/);
    named(/rtp_ipv6.* is not implemented/);
  });
});

describe("allow's framing (ulaw:30)", () => {
  test('the codec is allowed; a framing other than 20 ms is named, 20 is not', () => {
    const loaded = loadPjsipConf('[phone]\ntype=endpoint\nallow=ulaw:30,alaw:20\n', 'pjsip.conf');
    assert.deepEqual(loaded.errors, []);
    assert.deepEqual(loaded.config.endpoints.get('phone')?.codecs, ['ulaw', 'alaw']);
    assert.equal(loaded.warnings.filter((line) => /framing/.test(line)).length, 1, loaded.warnings.join('\n'));
    assert.ok(loaded.warnings.some((line) => /allow=ulaw:30: a framing of 30 ms is not implemented/.test(line)), loaded.warnings.join('\n'));
  });
});
