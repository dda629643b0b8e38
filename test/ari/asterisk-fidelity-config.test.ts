// Configuration Asterisk accepts with a warning (issue 20, item 9): extensions.conf lines that are
// unknown `#` directives — a line commented out as `# same => ...`, a `#word` Asterisk does not
// know — are skipped with a warning naming the file and line, and the server starts and runs the
// rest of the dialplan, as Asterisk does.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

const DIALPLAN = [
  '[fid9]',
  'exten => start,1,NoOp(first)',
  '# same => n,NoOp(commented out)',
  '#unknowndirective with words',
  ' same => n,Set(REACHED=yes)',
  ' same => n,Stasis(fid-conf)',
  '',
].join('\n');

type Json = Record<string, any>;

let server: TestServer;
let dir: string;
let app: EventSocket;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'patchbay-conf-'));
  writeFileSync(join(dir, 'extensions.conf'), DIALPLAN);
  server = await startTestServer({ dialplan: { file: join(dir, 'extensions.conf') } });
  app = await server.events('app=fid-conf');
});

after(async () => {
  await app?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('extensions.conf lines Asterisk warns about (item 9)', () => {
  test('unknown directives are skipped with a warning naming file and line; the dialplan runs', async () => {
    const warnings = server.logLines.map((line) => JSON.parse(line) as Json).filter((line) => line.level === 40 || line.level === 'warn');
    const texts = warnings.map((line) => String(line.msg));
    assert.ok(texts.some((text) => text.includes('extensions.conf:3') && text.includes("'#'")), texts.join('\n'));
    assert.ok(texts.some((text) => text.includes('extensions.conf:4') && text.includes('#unknowndirective')), texts.join('\n'));

    const response = await server.ari('/channels/conf9?endpoint=Local/start@fid9&app=fid-conf&otherChannelId=conf9-2', { method: 'POST' });
    assert.equal(response.status, 200);
    const steps: string[] = [];
    const deadline = Date.now() + 4000;
    for (;;) {
      const event = (await app.next(Math.max(1, deadline - Date.now()))) as Json;
      if (event.channel?.id !== 'conf9-2') continue;
      if (event.type === 'ChannelDialplan') steps.push(`${event.dialplan_app}(${event.dialplan_app_data})`);
      if (event.type === 'StasisStart') {
        assert.equal(event.channel.dialplan.priority, 3);
        break;
      }
    }
    assert.deepEqual(steps, ['NoOp(first)', 'Set(REACHED=yes)', 'Stasis(fid-conf)']);
    const reached = await server.ari('/channels/conf9-2/variable?variable=REACHED');
    assert.deepEqual(await reached.json(), { value: 'yes' });
    assert.equal((await server.ari('/channels/conf9', { method: 'DELETE' })).status, 204);
  });
});
