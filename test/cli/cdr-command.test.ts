// `patchbay cdr` against a real server: the records table, --json, filters, and a refused filter.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runAdminCommand } from '../../src/cli/admin.ts';
import { EXIT } from '../../src/cli/client.ts';
import type { CallDetailRecord } from '../../src/core/cdr/record.ts';
import { originate, startPbxServer, type PbxServer } from '../pbx/pbx-helpers.ts';

const DIALPLAN = `
[cli-cdr]
exten => busy,1,Busy()
exten => callee,1,Answer()
 same => n,Hangup()
exten => 100,1,Dial(Local/busy@cli-cdr)
exten => 200,1,Dial(Local/callee@cli-cdr)
`;

let pbx: PbxServer;
let env: NodeJS.ProcessEnv;
const posted: CallDetailRecord[] = [];

before(async () => {
  pbx = await startPbxServer(DIALPLAN, { cdr: { flush_ms: 20 } });
  pbx.server.core.records.onRecord((record) => posted.push(record));
  env = { PATCHBAY_HTTP_PORT: String(pbx.server.address.port), PATCHBAY_HTTP_BIND: '127.0.0.1', PATCHBAY_DATA_DIR: pbx.server.dataDir, PATCHBAY_ARI_USER: 'asterisk', PATCHBAY_ARI_PASSWORD: 'asterisk' };
  originate(pbx.server, 'Local/100@cli-cdr');
  originate(pbx.server, 'Local/200@cli-cdr');
  for (const deadline = Date.now() + 8000; Date.now() < deadline && !(posted.some((r) => r.dst === '100') && posted.some((r) => r.dst === '200' && r.dstchannel !== '')); ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await pbx.server.core.records.flush();
});
after(async () => {
  await pbx?.stop();
});

async function run(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runAdminCommand(args, env, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

test('patchbay cdr lists the records, newest first, and filters them', async () => {
  const all = await run(['cdr']);
  assert.equal(all.code, EXIT.ok, all.stderr);
  assert.match(all.stdout, /^START\s+SRC\s+DST\s+CONTEXT\s+CHANNEL\s+DSTCHANNEL\s+LASTAPP\s+DURATION\s+BILLSEC\s+DISPOSITION/m);
  assert.match(all.stdout, /\s100\s+cli-cdr\s+Local\/100@cli-cdr-\S+;2\s+Local\/busy@cli-cdr-\S+;1\s+Dial\s+\d+\s+0\s+BUSY/);
  const busy = await run(['cdr', '--disposition', 'BUSY', '--json']);
  assert.equal(busy.code, EXIT.ok, busy.stderr);
  const parsed = JSON.parse(busy.stdout) as { total: number; records: { dst: string; disposition: string }[] };
  assert.equal(parsed.total, 1);
  assert.deepEqual(parsed.records.map((r) => [r.dst, r.disposition]), [['100', 'BUSY']]);
  const byNumber = await run(['cdr', '--number', '200', '--limit', '5']);
  assert.equal(byNumber.code, EXIT.ok);
  assert.match(byNumber.stdout, /ANSWERED/);
  assert.doesNotMatch(byNumber.stdout, /BUSY/);
});

test('a malformed filter is refused by the server (exit 6) with its reason', async () => {
  const result = await run(['cdr', '--since', 'last tuesday']);
  assert.equal(result.code, EXIT.refused);
  assert.match(result.stderr, /since/);
});
