// The res_pjsip declarations are the one description of every option: the builder's defaults agree
// with the defaults ARI shows, every option parsed but not implemented is a warning when set, the
// dynamic configuration store's types are derived from them, pjsip.conf templates follow Asterisk's
// rules, and docs/sip.md's option table is generated from them.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { buildPjsipObject, PJSIP_OBJECT_TYPES } from '../../../src/channels/pjsip/config/index.ts';
import { PJSIP_TYPES } from '../../../src/channels/pjsip/config/declarations.ts';
import { PJSIP_TABLE_END, PJSIP_TABLE_START, renderPjsipOptionsTable, replacePjsipOptionsTable } from '../../../src/channels/pjsip/config/docs-table.ts';
import { pjsipConfigTypes } from '../../../src/channels/pjsip/config/store-types.ts';
import { readPjsipConfObjects } from '../../../src/channels/pjsip/objects.ts';

const REQUIRED: Record<string, Record<string, string>> = {
  auth: { username: 'u' },
  identify: { endpoint: 'e', match: '192.0.2.1' },
  registration: { server_uri: 'sip:registrar.example', client_uri: 'sip:me@registrar.example' },
  domain_alias: { domain: 'example.org' },
};

const build = (type: string, fields: Record<string, string>) => buildPjsipObject({ type, id: 'x', fields: { ...REQUIRED[type], ...fields } });

test("each option's default as ARI shows it is what the builder assumes when it is unset", () => {
  for (const [type, declared] of PJSIP_TYPES) {
    const unset = build(type, {});
    assert.deepEqual(unset.errors, [], type);
    for (const [name, option] of declared.options) {
      if (option.default === '' || name in (REQUIRED[type] ?? {})) continue;
      const set = build(type, { [name]: option.default });
      assert.deepEqual(set.errors, [], `${type}.${name}`);
      assert.deepEqual(set.value, unset.value, `${type}.${name}=${option.default} is the default`);
    }
  }
});

test('every option parsed but not implemented is named in a warning when set, and only those', () => {
  for (const [type, declared] of PJSIP_TYPES) {
    for (const [name, option] of declared.options) {
      const { warnings } = build(type, { [name]: option.default });
      const named = warnings.some((line) => line.includes(`${type} option '${name}' is not implemented by Patchbay; ignored`));
      assert.equal(named, !option.implemented, `${type}.${name}: ${warnings.join(' | ')}`);
    }
  }
  const unknown = build('endpoint', { frobnicate: 'yes' });
  assert.ok(unknown.warnings.some((line) => line.includes("endpoint option 'frobnicate' is not implemented by Patchbay; ignored")));
});

test("the dynamic configuration store's res_pjsip types are the declarations: names, order, defaults, checks", () => {
  const types = pjsipConfigTypes();
  assert.deepEqual(types.map((type) => type.objectType), PJSIP_OBJECT_TYPES);
  for (const { configClass, objectType, definition } of types) {
    assert.equal(configClass, 'res_pjsip');
    const declared = PJSIP_TYPES.get(objectType)!;
    assert.deepEqual(Object.keys(definition.fields), [...declared.options.keys()]);
    for (const [name, option] of declared.options) assert.equal(definition.fields[name]!.default, option.default);
  }
  const endpoint = types.find((type) => type.objectType === 'endpoint')!.definition.fields;
  assert.match(endpoint.dtmf_mode!.validate!('smoke') ?? '', /not one of rfc4733/);
  assert.equal(endpoint.dtmf_mode!.validate!('INFO'), undefined);
  assert.equal(endpoint.allow!.validate!('opus'), undefined, 'a codec Patchbay cannot carry is a warning, not a refusal');
  assert.match(endpoint.allow!.validate!('klingon') ?? '', /unknown codec/);
  assert.match(endpoint.context!.validate!('a\r\nInjected: yes') ?? '', /not a text value/);
  const aor = types.find((type) => type.objectType === 'aor')!.definition;
  assert.deepEqual(aor.backends, ['file', 'sqlite']);
  assert.deepEqual(types.find((type) => type.objectType === 'transport')!.definition.backends, ['file']);
});

test("pjsip.conf templates as Asterisk reads them: single values replaced, list options added, allow/disallow in order", () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-templates-'));
  try {
    const file = join(dir, 'pjsip.conf');
    writeFileSync(
      file,
      [
        '[phone](!)',
        'type=endpoint',
        'context=from-phones',
        'dtmf_mode=rfc4733',
        'callerid="Phone" <100>',
        'disallow=all',
        'allow=ulaw',
        'aors=phone',
        '[vip](phone)',
        'context=vip',
        'dtmf_mode=info',
        'callerid="VIP" <200>',
        'allow=alaw',
        'aors=vip',
        '[narrow](phone)',
        'disallow=ulaw',
        'allow=alaw',
        '[trunk]',
        'type=identify',
        'endpoint=vip',
        'match=192.0.2.1',
        'match=198.51.100.0/24',
        '',
      ].join('\n'),
    );
    const read = readPjsipConfObjects(file);
    assert.deepEqual(read.errors, []);
    const endpoints = read.tree.res_pjsip!.endpoint!;
    assert.equal(endpoints.vip!.context, 'vip');
    assert.equal(endpoints.vip!.dtmf_mode, 'info');
    assert.equal(endpoints.vip!.callerid, '"VIP" <200>');
    assert.equal(endpoints.vip!.aors, 'vip');
    assert.equal(endpoints.vip!.allow, 'ulaw,alaw');
    assert.equal(read.tree.res_pjsip!.identify!.trunk!.match, '192.0.2.1,198.51.100.0/24');
    const vip = buildPjsipObject({ type: 'endpoint', id: 'vip', fields: endpoints.vip! });
    assert.deepEqual(vip.errors, []);
    assert.equal(vip.value?.type === 'endpoint' && vip.value.context, 'vip');
    assert.deepEqual(vip.value?.type === 'endpoint' && vip.value.codecs, ['ulaw', 'alaw']);
    // The child's disallow comes after the template's allow: ulaw goes, alaw stays.
    const narrow = buildPjsipObject({ type: 'endpoint', id: 'narrow', fields: endpoints.narrow! });
    assert.deepEqual(narrow.value?.type === 'endpoint' && narrow.value.codecs, ['alaw']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('docs/sip.md has the option table the declarations give (npm run docs:pjsip)', () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/sip.md', import.meta.url)), 'utf8');
  assert.ok(doc.includes(PJSIP_TABLE_START) && doc.includes(PJSIP_TABLE_END));
  assert.ok(replacePjsipOptionsTable(doc, renderPjsipOptionsTable()) === doc, 'docs/sip.md is stale: run npm run docs:pjsip');
});
