// The server-management resource end to end, under both of its names: /ari/system/... (the spec's)
// and /ari/asterisk/... (real ARI's). System information, global variables, modules, log channels
// and dynamic configuration objects, including their persistence across a restart.
import assert from 'node:assert/strict';
import { existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ARI_DATE_PATTERN } from '../../src/util/ari-date.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** Both spellings of the resource; every behaviour below is checked under each. */
const PREFIXES = ['/system', '/asterisk'] as const;
/** Where each prefix keeps the dynamic configuration objects. */
const DYNAMIC = { '/system': '/system', '/asterisk': '/asterisk/config/dynamic' } as const;

const json = (body: unknown): RequestInit => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

let server: TestServer;
before(async () => {
  server = await startTestServer({ config_objects: { res_pjsip: { endpoint: { fixed: { context: 'ro' } } } } });
});
after(() => server.stop());

async function expectError(response: Response, status: number, message?: RegExp): Promise<void> {
  const body = await response.json();
  assert.equal(response.status, status, `expected ${status}, got ${response.status} ${JSON.stringify(body)}`);
  assert.equal(typeof body.message, 'string');
  if (message) assert.match(body.message, message);
}

async function expectNoContent(response: Response): Promise<void> {
  const text = await response.text();
  assert.equal(response.status, 204, `expected 204, got ${response.status} ${text}`);
  assert.equal(text, '');
}

describe('system information', () => {
  for (const prefix of PREFIXES) {
    test(`GET ${prefix}/info has all four sections with their fields`, async () => {
      const response = await server.ari(`${prefix}/info`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/json');
      const info = await response.json();
      assert.deepEqual(Object.keys(info).sort(), ['build', 'config', 'status', 'system']);

      assert.deepEqual(Object.keys(info.build).sort(), ['date', 'kernel', 'machine', 'options', 'os', 'user']);
      for (const value of Object.values(info.build)) assert.equal(typeof value, 'string');
      assert.ok(info.build.os !== '' && info.build.machine !== '');

      assert.deepEqual(info.system, { version: JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version, entity_id: server.config.serverId });

      assert.equal(info.config.name, server.config.systemName);
      assert.equal(info.config.default_language, 'en');
      assert.equal(typeof info.config.setid.user, 'string');
      assert.equal(typeof info.config.setid.group, 'string');
      // Zero means unlimited, and such options are left out rather than reported as 0.
      for (const option of ['max_channels', 'max_open_files', 'max_load']) assert.equal(option in info.config, false, option);

      assert.match(info.status.startup_time, ARI_DATE_PATTERN);
      assert.match(info.status.last_reload_time, ARI_DATE_PATTERN);
      const started = Date.parse(info.status.startup_time.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));
      assert.ok(Math.abs(started - server.core.startedAt.getTime()) < 1, 'startup_time is the server start, in local time with its offset');
    });

    test(`GET ${prefix}/info?only= filters the sections`, async () => {
      const one = await (await server.ari(`${prefix}/info?only=build`)).json();
      assert.deepEqual(Object.keys(one), ['build']);
      const two = await (await server.ari(`${prefix}/info?only=status,system`)).json();
      assert.deepEqual(Object.keys(two).sort(), ['status', 'system']);
      const mixedCase = await (await server.ari(`${prefix}/info?only=Config`)).json();
      assert.deepEqual(Object.keys(mixedCase), ['config']);
      await expectError(await server.ari(`${prefix}/info?only=build,nonsense`), 400, /only/);
    });
  }

  test('numeric limits are reported when set, dropped when 0', async () => {
    const limited = await startTestServer({ max_channels: 10, max_open_files: 0, max_load: 2.5 });
    try {
      const { config } = await (await limited.ari('/system/info?only=config')).json();
      assert.equal(config.max_channels, 10);
      assert.equal(config.max_load, 2.5);
      assert.equal('max_open_files' in config, false);
    } finally {
      await limited.stop();
    }
  });

  test('a module reload moves last_reload_time, not startup_time', async () => {
    const before = (await (await server.ari('/system/info?only=status')).json()).status;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await expectNoContent(await server.ari('/system/modules/res_ari.so', { method: 'PUT' }));
    const after = (await (await server.ari('/asterisk/info?only=status')).json()).status;
    assert.equal(after.startup_time, before.startup_time);
    assert.notEqual(after.last_reload_time, before.last_reload_time);
    assert.match(after.last_reload_time, ARI_DATE_PATTERN);
  });
});

describe('global variables', () => {
  for (const prefix of PREFIXES) {
    test(`${prefix}/variable: unset reads as empty, set, read back, unset by omitting value`, async () => {
      const name = `GV_${prefix.slice(1).toUpperCase()}`;
      const unset = await server.ari(`${prefix}/variable?variable=${name}`);
      assert.equal(unset.status, 200);
      assert.deepEqual(await unset.json(), { value: '' });

      await expectNoContent(await server.ari(`${prefix}/variable?variable=${name}&value=hello%20world`, { method: 'POST' }));
      assert.deepEqual(await (await server.ari(`${prefix}/variable?variable=${name}`)).json(), { value: 'hello world' });
      // The other resource name sees the same variable.
      const other = prefix === '/system' ? '/asterisk' : '/system';
      assert.deepEqual(await (await server.ari(`${other}/variable?variable=${name}`)).json(), { value: 'hello world' });

      await expectNoContent(await server.ari(`${prefix}/variable?variable=${name}`, { method: 'POST' }));
      assert.deepEqual(await (await server.ari(`${prefix}/variable?variable=${name}`)).json(), { value: '' });
    });

    test(`${prefix}/variable: an empty or missing name → 400`, async () => {
      await expectError(await server.ari(`${prefix}/variable?variable=`), 400, /variable/);
      await expectError(await server.ari(`${prefix}/variable?variable=&value=x`, { method: 'POST' }), 400, /variable/);
      await expectError(await server.ari(`${prefix}/variable`), 400, /variable/);
    });
  }
});

describe('modules', () => {
  for (const prefix of PREFIXES) {
    test(`GET ${prefix}/modules lists Running modules with the Module fields`, async () => {
      const response = await server.ari(`${prefix}/modules`);
      assert.equal(response.status, 200);
      const modules: Record<string, unknown>[] = await response.json();
      assert.ok(modules.length > 10);
      for (const module of modules) {
        assert.deepEqual(Object.keys(module).sort(), ['description', 'name', 'status', 'support_level', 'use_count']);
        assert.equal(typeof module.name, 'string');
        assert.equal(typeof module.description, 'string');
        assert.equal(typeof module.use_count, 'number');
        assert.equal(typeof module.support_level, 'string');
      }
      const names = modules.map((module) => module.name);
      for (const expected of ['res_ari.so', 'res_ari_asterisk.so', 'res_ari_mailboxes.so', 'res_ari_events.so']) {
        assert.ok(names.includes(expected), expected);
        assert.equal(modules.find((module) => module.name === expected)!.status, 'Running');
      }
    });

    test(`GET ${prefix}/modules/{name}: a loaded module, an unknown one`, async () => {
      const response = await server.ari(`${prefix}/modules/res_ari.so`);
      assert.equal(response.status, 200);
      const module = await response.json();
      assert.equal(module.name, 'res_ari.so');
      assert.equal(module.status, 'Running');
      assert.equal(module.description, 'Asterisk RESTful Interface');
      assert.equal(module.use_count, 0);
      await expectError(await server.ari(`${prefix}/modules/res_nonexistent.so`), 404);
    });
  }

  test('unloading a resource module takes its resource away; loading it serves it again', async () => {
    assert.equal((await server.ari('/mailboxes')).status, 200);
    await expectNoContent(await server.ari('/system/modules/res_ari_mailboxes.so', { method: 'DELETE' }));
    await expectError(await server.ari('/mailboxes'), 404, /^Resource not found$/);
    await expectError(await server.ari('/mailboxes/box1'), 404, /^Resource not found$/);
    // No longer loaded: get and unload answer 404, reload too.
    await expectError(await server.ari('/asterisk/modules/res_ari_mailboxes.so'), 404);
    await expectError(await server.ari('/asterisk/modules/res_ari_mailboxes.so', { method: 'DELETE' }), 404);
    await expectError(await server.ari('/asterisk/modules/res_ari_mailboxes.so', { method: 'PUT' }), 404);
    const listed = (await (await server.ari('/system/modules')).json()) as { name: string; status: string }[];
    assert.notEqual(listed.find((module) => module.name === 'res_ari_mailboxes.so')?.status, 'Running');

    await expectNoContent(await server.ari('/asterisk/modules/res_ari_mailboxes.so', { method: 'POST' }));
    const mailboxes = await server.ari('/mailboxes');
    assert.equal(mailboxes.status, 200);
    assert.deepEqual(await mailboxes.json(), []);
    assert.equal((await (await server.ari('/system/modules/res_ari_mailboxes.so')).json()).status, 'Running');
  });

  test('unloading res_ari_events.so refuses the event WebSocket until it is loaded again', async () => {
    await expectNoContent(await server.ari('/asterisk/modules/res_ari_events.so', { method: 'DELETE' }));
    try {
      await assert.rejects(server.events('app=while-unloaded'), /upgrade refused: 404/);
    } finally {
      await expectNoContent(await server.ari('/asterisk/modules/res_ari_events.so', { method: 'POST' }));
    }
    const socket = await server.events('app=after-reload');
    await socket.close();
  });

  test('the .so suffix may be left out', async () => {
    assert.equal((await (await server.ari('/system/modules/res_ari')).json()).name, 'res_ari.so');
  });

  test('loading a module that is already loaded → 409', async () => {
    await expectError(await server.ari('/system/modules/res_ari_channels.so', { method: 'POST' }), 409, /already loaded/);
    await expectError(await server.ari('/asterisk/modules/res_ari.so', { method: 'POST' }), 409);
  });

  test('loading a module that does not exist → 409', async () => {
    await expectError(await server.ari('/system/modules/res_nonexistent.so', { method: 'POST' }), 409);
  });

  test('unloading a module that is not loaded → 404', async () => {
    await expectError(await server.ari('/system/modules/res_nonexistent.so', { method: 'DELETE' }), 404);
  });

  test('reloading a module that does not support reload → 409; one that does → 204', async () => {
    await expectError(await server.ari('/system/modules/res_ari_mailboxes.so', { method: 'PUT' }), 409, /reload/i);
    await expectError(await server.ari('/asterisk/modules/app_stasis.so', { method: 'PUT' }), 409);
    await expectNoContent(await server.ari('/asterisk/modules/res_musiconhold.so', { method: 'PUT' }));
  });

  test('modules the server cannot run without refuse to unload (409) and keep serving', async () => {
    await expectError(await server.ari('/system/modules/res_ari.so', { method: 'DELETE' }), 409);
    // The management resource itself: unloading it would leave nothing to load it back with.
    await expectError(await server.ari('/asterisk/modules/res_ari_asterisk.so', { method: 'DELETE' }), 409);
    assert.equal((await server.ari('/system/ping')).status, 200);
    assert.equal((await server.ari('/asterisk/ping')).status, 200);
  });
});

describe('log channels', () => {
  const logsDir = (): string => server.config.dirs.logs;
  /** The file's text once every line logged so far is written (file channels write in batches). */
  const read = async (name: string): Promise<string> => {
    await server.core.logChannels.flush();
    return readFileSync(join(logsDir(), name), 'utf8');
  };

  for (const prefix of PREFIXES) {
    test(`GET ${prefix}/logging lists the channels with the LogChannel fields`, async () => {
      const response = await server.ari(`${prefix}/logging`);
      assert.equal(response.status, 200);
      const channels: Record<string, unknown>[] = await response.json();
      const messages = channels.find((channel) => channel.channel === 'messages.log');
      assert.deepEqual(messages, { channel: 'messages.log', type: 'File', status: 'Enabled', configuration: 'notice warning error' });
    });
  }

  test('the logs directory is <data>/logs', () => {
    assert.equal(logsDir(), join(server.dataDir, 'logs'));
  });

  test('create a file channel, record notices and warnings in it, rotate it, delete it', async () => {
    const name = 'patchbay-test.log';
    await expectNoContent(await server.ari(`/system/logging/${name}?configuration=notice,warning`, { method: 'POST' }));
    const listed = (await (await server.ari('/asterisk/logging')).json()) as Record<string, unknown>[];
    assert.deepEqual(
      listed.find((channel) => channel.channel === name),
      { channel: name, type: 'File', status: 'Enabled', configuration: 'notice warning' },
    );
    assert.ok(existsSync(join(logsDir(), name)), 'the file exists in the logs directory');

    // A module load at run time is a notice the server logs.
    await expectNoContent(await server.ari('/system/modules/res_ari_sounds.so', { method: 'DELETE' }));
    await expectNoContent(await server.ari('/system/modules/res_ari_sounds.so', { method: 'POST' }));
    const content = await read(name);
    assert.match(content, /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] NOTICE: .*res_ari_sounds\.so/m);
    assert.match(content, /NOTICE: Unloaded module res_ari_sounds\.so/);
    assert.match(content, /NOTICE: Loaded module res_ari_sounds\.so/);
    assert.doesNotMatch(content, /\] (DEBUG|ERROR):/, 'only the configured levels are recorded');
    // messages.log records notices too.
    assert.match(await read('messages.log'), /NOTICE: Loaded module res_ari_sounds\.so/);

    // Rotation: the old file moves aside, a fresh one takes the new lines.
    await expectNoContent(await server.ari(`/asterisk/logging/${name}/rotate`, { method: 'PUT' }));
    assert.ok((await read(`${name}.0`)).startsWith(content), 'the old lines moved to <name>.0');
    assert.doesNotMatch(await read(name), /res_ari_sounds/, 'the fresh file starts empty of them');
    await expectNoContent(await server.ari('/system/modules/res_musiconhold.so', { method: 'PUT' }));
    assert.match(await read(name), /NOTICE: Reloaded module res_musiconhold\.so/);
    assert.doesNotMatch(await read(`${name}.0`), /res_musiconhold/);
    await expectNoContent(await server.ari(`/system/logging/${name}/rotate`, { method: 'PUT' }));
    assert.ok(existsSync(join(logsDir(), `${name}.1`)), 'a second rotation takes the next number');
    assert.deepEqual(readdirSync(logsDir()).filter((file) => file.startsWith(name)).sort(), [name, `${name}.0`, `${name}.1`]);

    await expectNoContent(await server.ari(`/asterisk/logging/${name}`, { method: 'DELETE' }));
    const after = (await (await server.ari('/system/logging')).json()) as Record<string, unknown>[];
    assert.equal(after.some((channel) => channel.channel === name), false);
    await expectError(await server.ari(`/system/logging/${name}`, { method: 'DELETE' }), 404);
    await expectError(await server.ari(`/system/logging/${name}/rotate`, { method: 'PUT' }), 404);
  });

  for (const prefix of PREFIXES) {
    test(`${prefix}/logging: an existing channel → 409; empty or unknown levels → 400; unknown channel → 404`, async () => {
      const name = `dup${prefix.replace('/', '-')}.log`;
      await expectNoContent(await server.ari(`${prefix}/logging/${name}?configuration=notice,warning`, { method: 'POST' }));
      await expectError(await server.ari(`${prefix}/logging/${name}?configuration=error`, { method: 'POST' }), 409);
      await expectError(await server.ari(`${prefix}/logging/other.log?configuration=`, { method: 'POST' }), 400);
      await expectError(await server.ari(`${prefix}/logging/other.log`, { method: 'POST' }), 400, /configuration/);
      await expectError(await server.ari(`${prefix}/logging/other.log?configuration=notice,shouting`, { method: 'POST' }), 400, /shouting/);
      assert.equal(existsSync(join(logsDir(), 'other.log')), false, 'a refused channel leaves no file');
      await expectError(await server.ari(`${prefix}/logging/nosuch.log/rotate`, { method: 'PUT' }), 404);
      await expectError(await server.ari(`${prefix}/logging/nosuch.log`, { method: 'DELETE' }), 404);
      await expectNoContent(await server.ari(`${prefix}/logging/${name}`, { method: 'DELETE' }));
    });
  }

  test('a channel name that would leave the logs directory → 400', async () => {
    await expectError(await server.ari('/system/logging/..%2Fescape.log?configuration=notice', { method: 'POST' }), 400);
    assert.equal(existsSync(join(server.dataDir, 'escape.log')), false);
  });

  test('a name with control characters or path separators → 400, and no file', async () => {
    for (const name of ['bad%0Aname.log', 'tab%09.log', 'del%7F.log', 'back%5Cslash.log', 'sub%2Fdir.log']) {
      await expectError(await server.ari(`/asterisk/logging/${name}?configuration=notice`, { method: 'POST' }), 400, /Invalid log channel name/);
    }
    assert.deepEqual(readdirSync(logsDir()).filter((file) => /bad|tab|del|back|sub/.test(file)), []);
  });

  test('a symbolic link in the logs directory is not followed: 409, and the file it points to is untouched', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'patchbay-outside-'));
    try {
      const target = join(outside, 'target.txt');
      writeFileSync(target, 'precious\n');
      symlinkSync(target, join(logsDir(), 'link.log'));
      linkSync(target, join(logsDir(), 'hardlink.log'));
      await expectError(await server.ari('/asterisk/logging/link.log?configuration=*', { method: 'POST' }), 409, /symbolic link/);
      await expectError(await server.ari('/asterisk/logging/hardlink.log?configuration=*', { method: 'POST' }), 409, /hard links/);
      // Log something, as a created channel would record it.
      await expectNoContent(await server.ari('/system/modules/res_musiconhold.so', { method: 'PUT' }));
      await server.core.logChannels.flush();
      assert.equal(readFileSync(target, 'utf8'), 'precious\n');
      const listed = (await (await server.ari('/asterisk/logging')).json()) as Record<string, unknown>[];
      assert.equal(listed.some((channel) => channel.channel === 'link.log' || channel.channel === 'hardlink.log'), false);
    } finally {
      rmSync(join(logsDir(), 'link.log'), { force: true });
      rmSync(join(logsDir(), 'hardlink.log'), { force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test('the number of log channels is capped (logging.max_log_channels, 64): beyond → 409, room again after a delete', async () => {
    const existing = ((await (await server.ari('/asterisk/logging')).json()) as unknown[]).length;
    const names: string[] = [];
    for (let i = existing; i < 64; i++) {
      names.push(`cap-${i}.log`);
      await expectNoContent(await server.ari(`/asterisk/logging/cap-${i}.log?configuration=error`, { method: 'POST' }));
    }
    try {
      await expectError(await server.ari('/asterisk/logging/one-too-many.log?configuration=error', { method: 'POST' }), 409, /at most 64/);
      assert.equal(existsSync(join(logsDir(), 'one-too-many.log')), false);
      await expectNoContent(await server.ari(`/asterisk/logging/${names.pop()}`, { method: 'DELETE' }));
      await expectNoContent(await server.ari('/asterisk/logging/one-too-many.log?configuration=error', { method: 'POST' }));
      names.push('one-too-many.log');
    } finally {
      for (const name of names) await server.ari(`/asterisk/logging/${name}`, { method: 'DELETE' });
    }
  });
});

describe('dynamic configuration objects', () => {
  const ALICE_FIELDS = { fields: [{ attribute: 'context', value: 'from-test' }] };

  for (const prefix of PREFIXES) {
    const base = DYNAMIC[prefix];
    const id = `alice${prefix.replace('/', '-')}`;

    test(`${base}/res_pjsip/endpoint/{id}: create, read, reject bad fields, update, delete`, async () => {
      await expectError(await server.ari(`${base}/res_pjsip/endpoint/${id}`), 404);

      const created = await server.ari(`${base}/res_pjsip/endpoint/${id}`, { method: 'PUT', ...json(ALICE_FIELDS) });
      assert.equal(created.status, 200);
      const tuples: { attribute: string; value: string }[] = await created.json();
      assert.deepEqual(tuples[0], { attribute: 'context', value: 'from-test' });
      for (const tuple of tuples) assert.deepEqual(Object.keys(tuple).sort(), ['attribute', 'value']);
      // The full list: every attribute of the type, defaults filled in.
      const attributes = tuples.map((tuple) => tuple.attribute);
      for (const attribute of ['context', 'allow', 'aors', 'direct_media', 'dtmf_mode']) assert.ok(attributes.includes(attribute), attribute);
      assert.equal(tuples.find((tuple) => tuple.attribute === 'dtmf_mode')!.value, 'rfc4733');

      const read = await server.ari(`${base}/res_pjsip/endpoint/${id}`);
      assert.equal(read.status, 200);
      assert.deepEqual(await read.json(), tuples);
      // Same object under the other name.
      const other = prefix === '/system' ? DYNAMIC['/asterisk'] : DYNAMIC['/system'];
      assert.deepEqual(await (await server.ari(`${other}/res_pjsip/endpoint/${id}`)).json(), tuples);

      await expectError(
        await server.ari(`${base}/res_pjsip/endpoint/${id}`, { method: 'PUT', ...json({ fields: [{ attribute: 'colour', value: 'red' }] }) }),
        400,
        /colour/,
      );
      await expectError(
        await server.ari(`${base}/res_pjsip/endpoint/${id}`, { method: 'PUT', ...json({ fields: [{ attribute: 'dtmf_mode', value: 'smoke' }] }) }),
        400,
        /dtmf_mode/,
      );
      await expectError(await server.ari(`${base}/res_pjsip/endpoint/${id}`, { method: 'PUT', ...json({ fields: 'context=x' }) }), 400);
      // An existing object with no fields to change.
      await expectError(await server.ari(`${base}/res_pjsip/endpoint/${id}`, { method: 'PUT' }), 400);

      const updated = await server.ari(`${base}/res_pjsip/endpoint/${id}`, {
        method: 'PUT',
        ...json({ fields: [{ attribute: 'allow', value: 'opus' }] }),
      });
      assert.equal(updated.status, 200);
      const after: { attribute: string; value: string }[] = await updated.json();
      assert.equal(after.find((tuple) => tuple.attribute === 'context')!.value, 'from-test');
      assert.equal(after.find((tuple) => tuple.attribute === 'allow')!.value, 'opus');

      await expectNoContent(await server.ari(`${base}/res_pjsip/endpoint/${id}`, { method: 'DELETE' }));
      await expectError(await server.ari(`${base}/res_pjsip/endpoint/${id}`), 404);
      await expectError(await server.ari(`${base}/res_pjsip/endpoint/${id}`, { method: 'DELETE' }), 404);
    });

    test(`${base}: creating without fields takes the defaults`, async () => {
      const response = await server.ari(`${base}/res_pjsip/aor/bare${prefix.replace('/', '-')}`, { method: 'PUT' });
      assert.equal(response.status, 200);
      // Asterisk's defaults (max_contacts=0: no limit).
      assert.deepEqual(await response.json(), [
        { attribute: 'max_contacts', value: '0' },
        { attribute: 'remove_existing', value: 'no' },
        { attribute: 'contact', value: '' },
        { attribute: 'qualify_frequency', value: '0' },
        { attribute: 'qualify_timeout', value: '3.000000' },
        { attribute: 'default_expiration', value: '3600' },
        { attribute: 'minimum_expiration', value: '60' },
        { attribute: 'maximum_expiration', value: '7200' },
        { attribute: 'outbound_proxy', value: '' },
        { attribute: 'mailboxes', value: '' },
        { attribute: 'voicemail_extension', value: '' },
        { attribute: 'remove_unavailable', value: 'no' },
        { attribute: 'qualify_2xx_only', value: 'no' },
        { attribute: 'authenticate_qualify', value: 'no' },
        { attribute: 'support_path', value: 'no' },
      ]);
    });

    test(`${base}: unknown class or type → 404`, async () => {
      await expectError(await server.ari(`${base}/res_nothing/endpoint/alice`), 404, /res_nothing/);
      await expectError(await server.ari(`${base}/res_pjsip/gizmo/alice`), 404, /gizmo/);
      await expectError(await server.ari(`${base}/res_nothing/endpoint/alice`, { method: 'PUT', ...json(ALICE_FIELDS) }), 404);
      await expectError(await server.ari(`${base}/res_pjsip/gizmo/alice`, { method: 'DELETE' }), 404);
    });

    test(`${base}: objects from the configuration file are readable, but not writable (403)`, async () => {
      const response = await server.ari(`${base}/res_pjsip/endpoint/fixed`);
      assert.equal(response.status, 200);
      const tuples: { attribute: string; value: string }[] = await response.json();
      assert.deepEqual(tuples[0], { attribute: 'context', value: 'ro' });
      await expectError(await server.ari(`${base}/res_pjsip/endpoint/fixed`, { method: 'PUT', ...json(ALICE_FIELDS) }), 403);
      await expectError(await server.ari(`${base}/res_pjsip/endpoint/fixed`, { method: 'DELETE' }), 403);
      assert.deepEqual(await (await server.ari(`${base}/res_pjsip/endpoint/fixed`)).json(), tuples);
    });
  }

  test('with the SQLite backend module unloaded, creating and deleting → 403, reading goes on', async () => {
    await expectNoContent(await server.ari('/system/modules/res_patchbay_sqlite_config.so', { method: 'DELETE' }));
    try {
      await expectError(await server.ari('/system/res_pjsip/endpoint/nobackend', { method: 'PUT', ...json(ALICE_FIELDS) }), 403);
    } finally {
      await expectNoContent(await server.ari('/system/modules/res_patchbay_sqlite_config.so', { method: 'POST' }));
    }
    assert.equal((await server.ari('/system/res_pjsip/endpoint/nobackend', { method: 'PUT', ...json(ALICE_FIELDS) })).status, 200);
  });

  test('a written object survives a restart on the same data directory; a deleted one stays deleted', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-persist-'));
    try {
      const first = await startTestServer({}, { dataDir });
      try {
        assert.equal((await first.ari('/system/res_pjsip/endpoint/alice', { method: 'PUT', ...json(ALICE_FIELDS) })).status, 200);
        assert.equal((await first.ari('/system/res_pjsip/auth/gone', { method: 'PUT' })).status, 200);
        await expectNoContent(await first.ari('/system/res_pjsip/auth/gone', { method: 'DELETE' }));
      } finally {
        await first.stop();
      }
      assert.ok(existsSync(dataDir), 'stop() leaves a data directory it was given');

      const second = await startTestServer({}, { dataDir });
      try {
        const response = await second.ari('/asterisk/config/dynamic/res_pjsip/endpoint/alice');
        assert.equal(response.status, 200);
        const tuples: { attribute: string; value: string }[] = await response.json();
        assert.deepEqual(tuples[0], { attribute: 'context', value: 'from-test' });
        await expectError(await second.ari('/system/res_pjsip/auth/gone'), 404);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
