// The res_pjsip object functions and the URI parser as a dialplan reads them: PJSIP_DIAL_CONTACTS's
// dial string (registered then configured contacts, unreachable ones left out, request_user, an AOR
// given), PJSIP_ENDPOINT/PJSIP_AOR fields (set, default, unknown), PJSIP_AOR(...,contact) ids and
// PJSIP_CONTACT's fields; PJSIP_PARSE_URI(_FROM)'s parts; and hostile arguments failing as Asterisk.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { buildPjsipConfig } from '../../../src/channels/pjsip/config/index.ts';
import { contactId, pjsipObjectFunctions, type PjsipObjectSource } from '../../../src/channels/pjsip/object-functions.ts';
import { uriFunctions, uriPart } from '../../../src/channels/pjsip/uri-functions.ts';
import type { Channel } from '../../../src/core/channels/channel.ts';
import type { TechnologyFunction } from '../../../src/core/channels/technology.ts';
import { InvalidError } from '../../../src/core/errors.ts';
import type { Binding } from '../../../src/sip/registrar.ts';
import type { QualifyState } from '../../../src/channels/pjsip/qualify.ts';

const FIELDS: Record<string, Record<string, Record<string, string>>> = {
  endpoint: { alice: { aors: 'alice', context: 'phones', allow: 'ulaw,alaw' }, trunk: { aors: 'trunk', context: 'in' }, lonely: { context: 'x' } },
  aor: { alice: { max_contacts: '2' }, trunk: { contact: 'sip:provider.example:5060' } },
};

function binding(aor: string, uri: string, expiresAt: number): Binding {
  return { aor, uri, callId: `cid-${uri}`, cseq: 1, expiresAt, userAgent: 'SIPp', source: { transport: 'udp', address: '127.0.0.5', port: 5071 }, path: [] };
}

function source(bindings: Binding[], states: Record<string, QualifyState['status']> = {}): PjsipObjectSource & { warnings: string[] } {
  const objects = Object.entries(FIELDS).flatMap(([type, byId]) => Object.entries(byId).map(([id, fields]) => ({ type, id, fields })));
  const built = buildPjsipConfig(objects);
  assert.deepEqual(built.errors, []);
  const warnings: string[] = [];
  return {
    config: built.value,
    registrar: { lookup: (aor) => bindings.filter((b) => b.aor === aor) },
    qualifier: { state: (_aor, uri) => (states[uri] ? { status: states[uri], roundtripUsec: 1234 } : undefined) },
    fieldsOf: (type, id) => FIELDS[type]?.[id],
    warn: (message) => void warnings.push(message),
    warnings,
  };
}

function fn(functions: readonly TechnologyFunction[], name: string): TechnologyFunction {
  const found = functions.find((f) => f.name === name);
  assert.ok(found, name);
  return found;
}

/** The read as the dialplan sees it: a value, or undefined when it fails (InvalidError). */
function read(functions: readonly TechnologyFunction[], name: string, args: string, channel?: Channel): string | undefined {
  try {
    return fn(functions, name).read?.({ channel, args });
  } catch (error) {
    if (error instanceof InvalidError) return undefined;
    throw error;
  }
}

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

describe('PJSIP_DIAL_CONTACTS', () => {
  const a = 'sip:alice@127.0.0.5:5071';
  const b = 'sip:alice@127.0.0.6:5072;transport=udp';
  test('every contact of the endpoint\'s AORs, joined by &', () => {
    const functions = pjsipObjectFunctions(() => source([binding('alice', a, 2e12), binding('alice', b, 2e12)]));
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', 'alice'), `PJSIP/alice/${a}&PJSIP/alice/${b}`);
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', 'alice,,bob'), `PJSIP/bob@alice/${a}&PJSIP/bob@alice/${b}`);
  });
  test('a contact qualify found unreachable is left out; an unknown one stays', () => {
    const functions = pjsipObjectFunctions(() => source([binding('alice', a, 2e12), binding('alice', b, 2e12)], { [a]: 'Unreachable', [b]: 'Unknown' }));
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', 'alice'), `PJSIP/alice/${b}`);
  });
  test('an AOR given replaces the endpoint\'s; configured contacts count; no contact is empty', () => {
    const functions = pjsipObjectFunctions(() => source([binding('alice', a, 2e12)]));
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', 'alice,trunk'), 'PJSIP/alice/sip:provider.example:5060');
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', 'trunk'), 'PJSIP/trunk/sip:provider.example:5060');
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', 'alice,nosuchaor'), '');
  });
  test('no endpoint, an unknown one, or one without AORs fails with Asterisk\'s warning', () => {
    const objects = source([]);
    const functions = pjsipObjectFunctions(() => objects);
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', ''), undefined);
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', 'nobody'), undefined);
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', 'lonely'), undefined);
    assert.equal(read(functions, 'PJSIP_DIAL_CONTACTS', 'x'.repeat(100_000)), undefined);
    assert.deepEqual(objects.warnings.slice(0, 3), [
      "An endpoint name must be specified when using the 'PJSIP_DIAL_CONTACTS' dialplan function",
      "Specified endpoint 'nobody' was not found",
      "No AOR has been provided and no AORs are configured on endpoint 'lonely'",
    ]);
  });
  test('without a running technology (the docs\' catalog) every read fails', () => {
    assert.equal(read(pjsipObjectFunctions(() => undefined), 'PJSIP_DIAL_CONTACTS', 'alice'), undefined);
  });
});

describe('PJSIP_ENDPOINT, PJSIP_AOR, PJSIP_CONTACT', () => {
  const a = 'sip:alice@127.0.0.5:5071';
  const objects = source([binding('alice', a, 1_900_000_000_500)], { [a]: 'Reachable' });
  const functions = pjsipObjectFunctions(() => objects);
  test('a field set, a default, an unknown field or object', () => {
    assert.equal(read(functions, 'PJSIP_ENDPOINT', 'alice,context'), 'phones');
    assert.equal(read(functions, 'PJSIP_ENDPOINT', 'alice,aors'), 'alice');
    assert.equal(read(functions, 'PJSIP_ENDPOINT', 'alice,dtmf_mode'), 'rfc4733');
    assert.equal(read(functions, 'PJSIP_ENDPOINT', 'alice,nosuchfield'), undefined);
    assert.equal(read(functions, 'PJSIP_ENDPOINT', 'nobody,context'), undefined);
    assert.equal(read(functions, 'PJSIP_ENDPOINT', 'alice'), undefined);
    assert.equal(read(functions, 'PJSIP_AOR', 'alice,max_contacts'), '2');
    assert.equal(read(functions, 'PJSIP_AOR', 'alice,qualify_frequency'), '0');
    assert.ok(objects.warnings.includes("Unknown property 'nosuchfield' for PJSIP endpoint"));
    assert.ok(objects.warnings.includes("Failed to retrieve information for endpoint 'nobody'"));
  });
  test('an AOR\'s contacts are Asterisk\'s ids; PJSIP_CONTACT reads each', () => {
    assert.equal(contactId('alice', a, false), `alice;@${md5(a)}`);
    assert.equal(read(functions, 'PJSIP_AOR', 'alice,contact'), `alice;@${md5(a)}`);
    const permanent = `trunk@@${md5('sip:provider.example:5060')}`;
    assert.equal(read(functions, 'PJSIP_AOR', 'trunk,contact'), permanent);
    const id = `alice;@${md5(a)}`;
    assert.equal(read(functions, 'PJSIP_CONTACT', `${id},uri`), a);
    assert.equal(read(functions, 'PJSIP_CONTACT', `${id},status`), 'Available');
    assert.equal(read(functions, 'PJSIP_CONTACT', `${id},rtt`), '1234');
    assert.equal(read(functions, 'PJSIP_CONTACT', `${id},user_agent`), 'SIPp');
    assert.equal(read(functions, 'PJSIP_CONTACT', `${id},expiration_time`), '1900000000');
    assert.equal(read(functions, 'PJSIP_CONTACT', `${id},endpoint`), 'alice');
    assert.equal(read(functions, 'PJSIP_CONTACT', `${id},via_addr`), '127.0.0.5');
    assert.equal(read(functions, 'PJSIP_CONTACT', `${permanent},status`), 'Unknown');
    assert.equal(read(functions, 'PJSIP_CONTACT', `${permanent},rtt`), 'N/A');
    assert.equal(read(functions, 'PJSIP_CONTACT', `${id},bogus`), undefined);
    assert.equal(read(functions, 'PJSIP_CONTACT', 'alice;@0000,uri'), undefined);
    assert.equal(read(functions, 'PJSIP_CONTACT', 'nosep,uri'), undefined);
  });
});

describe('PJSIP_PARSE_URI and PJSIP_PARSE_URI_FROM', () => {
  test('each part of a name-addr and of a bare URI', () => {
    const uri = '"Alice A" <sips:alice:secret@example.com:5061;transport=tls;user=phone;method=INVITE;ttl=5;lr;maddr=10.0.0.1>';
    const parts: Record<string, string> = {
      scheme: 'sips', display: 'Alice A', user: 'alice', passwd: 'secret', host: 'example.com', port: '5061',
      user_param: 'phone', method_param: 'INVITE', transport_param: 'tls', ttl_param: '5', lr_param: '1', maddr_param: '10.0.0.1',
    };
    for (const [type, value] of Object.entries(parts)) assert.equal(uriPart(uri, type), value, type);
    assert.equal(uriPart('sip:bob@10.1.2.3;transport=tcp', 'transport_param'), 'tcp');
    assert.equal(uriPart('sip:bob@10.1.2.3', 'port'), '0');
    assert.equal(uriPart('sip:bob@10.1.2.3', 'ttl_param'), '-1');
    assert.equal(uriPart('sip:bob@10.1.2.3', 'lr_param'), '0');
    assert.equal(uriPart('sip:bob@10.1.2.3', 'display'), '');
  });
  test('not a SIP URI, an unknown type, hostile text: the read fails', () => {
    assert.equal(uriPart('tel:+15551234', 'user'), undefined);
    assert.equal(uriPart('sip:bob@10.1.2.3', 'nope'), undefined);
    assert.equal(uriPart(`sip:${'a'.repeat(10_000)}@x`, 'user'), undefined);
    assert.equal(uriPart('<sip:bob@', 'host'), undefined);
    assert.equal(read(uriFunctions, 'PJSIP_PARSE_URI', ''), undefined);
    assert.equal(read(uriFunctions, 'PJSIP_PARSE_URI', 'sip:bob@h'), undefined);
    assert.equal(read(uriFunctions, 'PJSIP_PARSE_URI', 'sip:bob@h,user'), 'bob');
  });
  test('_FROM reads the URI, commas and all, from a channel variable', () => {
    const channel = { getVariable: (name: string) => (name === 'URI' ? '"Smith, John" <sip:john@example.com>' : undefined) } as unknown as Channel;
    assert.equal(read(uriFunctions, 'PJSIP_PARSE_URI_FROM', 'URI,display', channel), 'Smith, John');
    assert.equal(read(uriFunctions, 'PJSIP_PARSE_URI_FROM', 'URI,host', channel), 'example.com');
    assert.equal(read(uriFunctions, 'PJSIP_PARSE_URI_FROM', 'EMPTY,host', channel), undefined);
    assert.equal(read(uriFunctions, 'PJSIP_PARSE_URI_FROM', ',host', channel), undefined);
  });
});
