// A SIP call from SIPp answered by the dialplan, and the CDR Patchbay writes for it, compared with
// what Asterisk 22 writes for the same flow: one record, party A the PJSIP channel, src and clid
// from the From header, dst the dialled extension, lastapp the last application run, ANSWERED
// with billsec the time after Answer().
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CallDetailRecord } from '../../src/core/cdr/record.ts';
import { HAVE_SIPP, HAVE_SOX, sipp, startSippServer, waitFor, type SippServer } from './sipp-peer.ts';

const DIALPLAN = `
[cdr-in]
exten => 200,1,Answer()
 same => n,Wait(1.2)
 same => n,Hangup()
`;

let peer: SippServer;
const posted: CallDetailRecord[] = [];

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('sipp-cdr', DIALPLAN, { endpoint: { bob: { context: 'cdr-in', allow: 'ulaw', aors: 'bob' } }, aor: { bob: { max_contacts: 1 } } }, 'cdr-watch');
  if (HAVE_SOX) spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(peer.work, 'audio.wav'), 'synth', '4', 'sine', '1000', 'vol', '0.5']);
  peer.server.core.records.onRecord((record) => posted.push(record));
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

describe('the CDR of a SIP call', { skip: HAVE_SIPP && HAVE_SOX ? false : 'sipp or sox is not installed' }, () => {
  test('answered by the dialplan: one record with Asterisk\'s fields, and its Master.csv line', { timeout: 60_000 }, async () => {
    const run = sipp('call-wait-bye.xml', [peer.target(), '-s', '200', '-set', 'caller', 'bob'], { cwd: peer.work });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const record = await waitFor('the record', () => posted.find((r) => r.channel.startsWith('PJSIP/bob-')));
    assert.equal(posted.length, 1, JSON.stringify(posted));
    assert.equal(record.src, 'bob');
    assert.equal(record.clid, '"SIPp Caller" <bob>');
    assert.equal(record.dst, '200');
    assert.equal(record.dcontext, 'cdr-in');
    assert.equal(record.dstchannel, '');
    assert.equal(record.lastapp, 'Hangup');
    assert.equal(record.disposition, 'ANSWERED');
    assert.ok(record.answer >= record.start && record.answer > 0);
    assert.ok(record.billsec >= 1 && record.billsec <= 2, `billsec ${record.billsec}`);
    assert.equal(record.duration >= record.billsec, true);
    await peer.server.core.records.flush();
    const csv = readFileSync(join(peer.server.config.dirs.logs, 'cdr-csv', 'Master.csv'), 'utf8');
    assert.match(csv, /^"","bob","200","cdr-in","""SIPp Caller"" <bob>","PJSIP\/bob-[0-9a-f]+","","Hangup","","[^"]+","[^"]+","[^"]+",\d+,[12],"ANSWERED","DOCUMENTATION"\n$/);
  });
});
