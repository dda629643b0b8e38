// Dynamic configuration validates as Asterisk's sorcery does (issue 20, item 10): a PUT through
// ARI is refused (400) for exactly the field values pjsip.conf loading refuses, field by field, for
// every object type ARI may write — `allow=BLECH` on an endpoint among them — and accepted
// otherwise. (The field rules come from the one declaration per object both paths use.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadPjsipConf } from '../../src/channels/pjsip/config/conf-file.ts';
import { PJSIP_OBJECT_TYPES, pjsipAttributeNames } from '../../src/channels/pjsip/config/build.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** Values each field is tried with: good and bad for one kind of field or another. */
const PROBES = ['BLECH', 'ulaw', 'yes', 'maybe', '0', '-1', '1.5', '60', 'sip:peer@127.0.0.1:5070', '127.0.0.1', 'md5'];

/** What each type needs to be an object at all (Asterisk's apply handlers refuse it without). */
const REQUIRED: Record<string, Record<string, string>> = {
  auth: { username: 'u' },
  identify: { endpoint: 'e', match: '192.0.2.1' },
  registration: { server_uri: 'sip:registrar.example', client_uri: 'sip:me@registrar.example' },
  domain_alias: { domain: 'example.org' },
};

let server: TestServer;
let sequence = 0;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
});

async function put(type: string, fields: Record<string, string>): Promise<{ status: number; text: string }> {
  const id = `probe${++sequence}`;
  const body = JSON.stringify({ fields: Object.entries(fields).map(([attribute, value]) => ({ attribute, value })) });
  const response = await server.ari(`/asterisk/config/dynamic/res_pjsip/${type}/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, text: await response.text() };
}

/**
 * The error pjsip.conf loading reports for the field's own value, if any. Errors between fields
 * (an auth_type=md5 without md5_cred) are left out: ARI writes do not check them (docs/differences.md).
 */
function fileRefuses(type: string, fields: Record<string, string>, name: string): string | undefined {
  const lines = Object.entries(fields).map(([key, value]) => `${key}=${value}`);
  const errors = loadPjsipConf(`[probe]\ntype=${type}\n${lines.join('\n')}\n`, 'pjsip.conf').errors;
  return errors.find((line) => line.includes(`] ${name}: `) && !/ is required| needs /.test(line));
}

describe('dynamic configuration validation (item 10)', () => {
  test('allow=BLECH on an endpoint answers 400, on creation and on update', async () => {
    const created = await put('endpoint', { allow: 'BLECH' });
    assert.equal(created.status, 400, created.text);
    assert.match(created.text, /allow/);
    const response = await server.ari('/asterisk/config/dynamic/res_pjsip/endpoint/kept', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fields: [{ attribute: 'allow', value: 'ulaw' }] }),
    });
    assert.equal(response.status, 200);
    const updated = await server.ari('/asterisk/config/dynamic/res_pjsip/endpoint/kept', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ fields: [{ attribute: 'allow', value: '!ulaw,BLECH' }] }),
    });
    assert.equal(updated.status, 400);
    const kept = (await (await server.ari('/asterisk/config/dynamic/res_pjsip/endpoint/kept')).json()) as { attribute: string; value: string }[];
    assert.equal(kept.find((tuple) => tuple.attribute === 'allow')?.value, 'ulaw');
  });

  test('every field of every writable type: 400 exactly where pjsip.conf loading refuses the value', async () => {
    const mismatches: string[] = [];
    let writableTypes = 0;
    for (const type of PJSIP_OBJECT_TYPES) {
      // File-only types (transport, global, ...) cannot be created through ARI at all.
      const probe = await put(type, { ...REQUIRED[type] });
      if (probe.status === 403) continue;
      assert.equal(probe.status, 200, `${type}: ${probe.text}`);
      writableTypes += 1;
      for (const name of pjsipAttributeNames(type)) {
        for (const value of PROBES) {
          const fields = { ...REQUIRED[type], [name]: value };
          const refused = fileRefuses(type, fields, name);
          const answer = await put(type, fields);
          if ((answer.status === 400) !== (refused !== undefined) || (answer.status !== 400 && answer.status !== 200)) {
            mismatches.push(`${type}.${name}=${value}: ARI ${answer.status}, pjsip.conf ${refused ?? 'accepted'}`);
          }
        }
      }
    }
    assert.ok(writableTypes >= 5, `${writableTypes} writable types`);
    assert.deepEqual(mismatches, []);
  });
});
