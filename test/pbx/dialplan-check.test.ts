// Loud, early failure: a dialplan naming applications and functions Patchbay lacks still loads,
// with one warning line per name giving file and line, and a summary; a call reaching an unknown
// application hangs up with cause 38. `#include` reads files beside extensions.conf (globs,
// relative paths) and nothing outside; `#exec` is refused with a line saying so.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { channelName, collectUntil, originate, watchAll } from './pbx-helpers.ts';

const MAIN = `[general]
#exec /bin/echo hello
#include "parts/*.conf"

[main]
exten => 100,1,Answer()
 same => n,Queue(support)
 same => n,Set(X=\${SHELL(ls /)})
 same => n,Queue(sales)
 same => n,Set(FOO_BAR(x)=1)
exten => 101,1,NoOp(\${NOSUCHFUNC(a)})
 same => n,ExecIf(1?AlsoMissing(x):NoOp())
`;

const PART = `[included]
exten => 200,1,NoOp(from an included file)
 same => n,VoiceMail(100@default)
`;

let dir: string;
let server: TestServer;
let main: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-check-'));
  mkdirSync(join(dir, 'parts'));
  main = join(dir, 'extensions.conf');
  writeFileSync(main, MAIN);
  writeFileSync(join(dir, 'parts', 'a.conf'), PART);
  server = await startTestServer({ dialplan: { file: main } });
});
after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const warnings = (): string[] =>
  server.logLines
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((entry) => entry.level === 40)
    .map((entry) => entry.msg);

describe('the load-time check', () => {
  test('one warning per unknown name with file and line, refused #exec, a summary; the server runs', async () => {
    const part = join(dir, 'parts', 'a.conf');
    const lines = warnings();
    const expected = [
      `${main}:2: #exec refused: Patchbay does not run programs named in its configuration; line ignored`,
      `${main}:7: unknown application 'Queue'`,
      `${main}:8: function 'SHELL' is not provided: it acts outside the server`,
      `${main}:10: unknown function 'FOO_BAR'`,
      `${main}:11: unknown function 'NOSUCHFUNC'`,
      `${main}:12: unknown application 'AlsoMissing'`,
      `${part}:3: unknown application 'VoiceMail'`,
    ];
    for (const line of expected) assert.equal(lines.filter((entry) => entry === line).length, 1, `exactly once: ${line}\nin ${lines.join('\n')}`);
    assert.ok(!lines.some((line) => line.endsWith("'Queue'") && line !== expected[1]), 'Queue is named once, at its first use');
    const summary = lines.find((line) => line.startsWith(`${main}: `));
    assert.equal(
      summary,
      `${main}: 3 unknown applications (VoiceMail, Queue, AlsoMissing), 2 unknown functions (FOO_BAR, NOSUCHFUNC), 1 function not provided (SHELL); a call reaching an unknown application hangs up, an unknown function reads as empty`,
    );
    const info = await server.ari('/asterisk/info');
    assert.equal(info.status, 200);
  });

  test('the included file is part of the dialplan', () => {
    assert.ok(server.core.dialplan.exists('included', '200'));
  });

  test('a call reaching an unknown application hangs up with cause 38 and a warning naming it', async () => {
    const events = await watchAll(server);
    try {
      const call = originate(server, 'Local/100@main');
      const seen = await collectUntil(events, (event) => event.type === 'ChannelDestroyed' && channelName(event) === call.two.name, 15_000);
      const destroyed = seen.find((event) => event.type === 'ChannelDestroyed' && channelName(event) === call.two.name);
      assert.equal(destroyed?.cause, 38);
      assert.ok(
        warnings().some((line) => line.startsWith(`No application 'Queue' for extension (main, 100, 2) at ${main}:7; hanging up`)),
        warnings().join('\n'),
      );
    } finally {
      await events.close();
    }
  });
});

describe('reload', () => {
  test('a reload checks the new dialplan: its unknown names are warned about once each', async () => {
    const before = server.logLines.length;
    writeFileSync(main, '[main]\nexten => 100,1,NoOp()\n same => n,Dictate(x)\n same => n,Set(A=${RAND_NOT(1)})\n');
    try {
      const response = await server.ari('/asterisk/modules/pbx_config.so', { method: 'PUT' });
      assert.equal(response.status, 204);
      const fresh = server.logLines
        .slice(before)
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((entry) => entry.level === 40)
        .map((entry) => entry.msg);
      assert.deepEqual(fresh, [
        `${main}:3: unknown application 'Dictate'`,
        `${main}:4: unknown function 'RAND_NOT'`,
        `${main}: 1 unknown application (Dictate), 1 unknown function (RAND_NOT); a call reaching an unknown application hangs up, an unknown function reads as empty`,
      ]);
    } finally {
      writeFileSync(main, MAIN);
    }
  });
});

describe('#include is confined to the configuration directory', () => {
  test('an include leaving the directory stops start-up with file and line', async () => {
    const other = mkdtempSync(join(tmpdir(), 'patchbay-check-out-'));
    try {
      const file = join(other, 'extensions.conf');
      writeFileSync(file, '[a]\n#include ../../../etc/passwd\nexten => 1,1,NoOp()\n');
      await assert.rejects(startTestServer({ dialplan: { file } }), (error: Error) => {
        assert.match(error.message, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: #include of \\.\\./\\.\\./\\.\\./etc/passwd refused: it leaves the configuration directory`));
        return true;
      });
      writeFileSync(file, '[a]\n#include self.conf\n');
      writeFileSync(join(other, 'self.conf'), '#include self.conf\n');
      await assert.rejects(startTestServer({ dialplan: { file } }), /#include nested deeper than 8 files/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
