// Call detail records of calls placed through Local channels and Dial(), compared with what
// Asterisk 22 writes for the same flows (cdr.conf defaults: unanswered=no, congestion=no): the
// caller's record names the dialed channel, Dial is its lastapp, and the disposition follows the
// dial status. Also Master.csv, CDR()/NoCDR/ResetCDR, the CEL sequence and the read API.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CallDetailRecord } from '../../../src/core/cdr/record.ts';
import { AUTH } from '../../helpers/server.ts';
import { originate, startPbxServer, type PbxServer } from '../../pbx/pbx-helpers.ts';

const DIALPLAN = `
[sub-dial]
exten => s,1,Dial(Local/busy@cdr-test)
 same => n,Return()

[cdr-test]
exten => callee-answer,1,Answer()
 same => n,Wait(1.2)
 same => n,Hangup()
exten => busy,1,Busy()
exten => congested,1,Congestion(5)
exten => ringing,1,Ringing()
 same => n,Wait(10)

exten => caller-answer,1,Set(CDR(myvar)=hello)
 same => n,Set(CDR(userfield)=uf-1)
 same => n,Set(CDR(accountcode)=acct42)
 same => n,Dial(Local/callee-answer@cdr-test,5)
 same => n,Hangup()
exten => caller-busy,1,Dial(Local/busy@cdr-test)
 same => n,Hangup()
exten => caller-noanswer,1,Dial(Local/ringing@cdr-test,1)
 same => n,Hangup()
exten => caller-failed,1,Dial(Local/congested@cdr-test)
 same => n,Hangup()
exten => caller-nocdr,1,NoCDR()
 same => n,Dial(Local/callee-answer@cdr-test,5)
 same => n,Hangup()
exten => caller-reset,1,Answer()
 same => n,Wait(1.1)
 same => n,Set(CDR(before)=\${CDR(billsec)})
 same => n,ResetCDR(v)
 same => n,Set(CDR(after)=\${CDR(billsec)}:\${CDR(disposition)}:\${CDR(amaflags,u)}:\${CDR(dst)}:\${CDR(end)})
 same => n,Set(CDR(amaflags)=BILLING)
 same => n,Hangup()
exten => caller-gosub,1,Gosub(sub-dial,s,1)
 same => n,Hangup()
exten => user-event,1,CELGenUserEvent(MYEVENT,some,extra)
 same => n,CELGenUserEvent()
 same => n,Hangup()
exten => caller-readonly,1,Set(CDR(billsec)=100)
 same => n,Set(RESULT=\${CDR(billsec)})
 same => n,Dial(Local/busy@cdr-test)
`;

/** Waits until a posted record matches, or fails. */
async function recordOf(server: PbxServer, match: (record: CallDetailRecord) => boolean, seen: CallDetailRecord[], timeoutMs = 8000): Promise<CallDetailRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = seen.find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no such record; saw ${JSON.stringify(seen.map((r) => [r.channel, r.dst, r.disposition]))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const callerOf = (exten: string) => (r: CallDetailRecord): boolean => r.dst === exten && r.channel.startsWith(`Local/${exten}@cdr-test-`) && r.channel.endsWith(';2');

describe('CDRs of Dial() through Local channels', () => {
  let pbx: PbxServer;
  const posted: CallDetailRecord[] = [];

  before(async () => {
    pbx = await startPbxServer(DIALPLAN, { cdr: { flush_ms: 20 }, cel: { enabled: true, events: 'ALL', apps: 'dial' } });
    pbx.server.core.records.onRecord((record) => posted.push(record));
  });
  after(async () => {
    await pbx?.stop();
  });

  test('answered: ANSWERED, dstchannel the callee, lastapp Dial, billsec counts from the answer', async () => {
    originate(pbx.server, 'Local/caller-answer@cdr-test');
    const r = await recordOf(pbx, callerOf('caller-answer'), posted);
    assert.equal(r.disposition, 'ANSWERED');
    assert.equal(r.dcontext, 'cdr-test');
    assert.equal(r.lastapp, 'Dial');
    assert.equal(r.lastdata, 'Local/callee-answer@cdr-test,5');
    assert.match(r.dstchannel, /^Local\/callee-answer@cdr-test-[0-9a-f]+;1$/);
    assert.ok(r.answer > 0 && r.answer >= r.start && r.end >= r.answer);
    assert.ok(r.billsec >= 1 && r.billsec <= 2, `billsec ${r.billsec}`);
    assert.ok(r.duration >= r.billsec);
    assert.equal(r.amaflags, 'DOCUMENTATION');
    assert.equal(r.userfield, 'uf-1');
    assert.equal(r.accountcode, 'acct42');
    assert.deepEqual(r.variables, { myvar: 'hello' });
    assert.equal(r.uniqueid.length > 0, true);
    // The dialed callee alone makes no record (Asterisk discards a dialed party A without party B).
    assert.equal(posted.some((p) => /^Local\/callee-answer@cdr-test-[0-9a-f]+;1$/.test(p.channel)), false);
  });

  test('busy: BUSY, not answered, billsec 0', async () => {
    originate(pbx.server, 'Local/caller-busy@cdr-test');
    const r = await recordOf(pbx, callerOf('caller-busy'), posted);
    assert.equal(r.disposition, 'BUSY');
    assert.equal(r.answer, 0);
    assert.equal(r.billsec, 0);
    assert.equal(r.lastapp, 'Dial');
    assert.match(r.dstchannel, /^Local\/busy@cdr-test-[0-9a-f]+;1$/);
  });

  test('a Dial() inside a Gosub: dst and dcontext stay where the call went, as cdr.c keeps them', async () => {
    originate(pbx.server, 'Local/caller-gosub@cdr-test');
    const r = await recordOf(pbx, callerOf('caller-gosub'), posted);
    assert.deepEqual([r.dst, r.dcontext, r.lastapp, r.disposition], ['caller-gosub', 'cdr-test', 'Dial', 'BUSY']);
  });

  test('no answer: NO ANSWER after the Dial timeout', async () => {
    originate(pbx.server, 'Local/caller-noanswer@cdr-test');
    const r = await recordOf(pbx, callerOf('caller-noanswer'), posted);
    assert.equal(r.disposition, 'NO ANSWER');
    assert.equal(r.billsec, 0);
    assert.ok(r.duration >= 1);
    assert.equal(r.lastdata, 'Local/ringing@cdr-test,1');
  });

  test('failed: congestion is FAILED with congestion=no', async () => {
    originate(pbx.server, 'Local/caller-failed@cdr-test');
    const r = await recordOf(pbx, callerOf('caller-failed'), posted);
    assert.equal(r.disposition, 'FAILED');
    assert.equal(r.billsec, 0);
  });

  test('the unanswered callee of a busy call posts nothing (unanswered=no)', () => {
    assert.equal(posted.some((p) => p.channel.startsWith('Local/busy@cdr-test-')), false);
  });

  test('NoCDR: no record of the channel; CDR(billsec) is read-only', async () => {
    originate(pbx.server, 'Local/caller-nocdr@cdr-test');
    originate(pbx.server, 'Local/caller-readonly@cdr-test');
    const r = await recordOf(pbx, callerOf('caller-readonly'), posted);
    assert.equal(r.billsec, 0);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal(posted.some(callerOf('caller-nocdr')), false);
  });

  test('ResetCDR(v) restarts the times and keeps the variables; CDR() reads fields during the call; CDR(amaflags) writes', async () => {
    originate(pbx.server, 'Local/caller-reset@cdr-test');
    const r = await recordOf(pbx, callerOf('caller-reset'), posted);
    assert.equal(r.disposition, 'ANSWERED');
    assert.equal(r.dstchannel, '');
    assert.equal(r.variables.before, '1');
    // Undecided dispositions read as NO ANSWER (AST_CDR_NULL); the end is empty until the record ends.
    assert.equal(r.variables.after, '0:NO ANSWER:3:caller-reset:');
    assert.equal(r.billsec, 0);
    assert.equal(r.duration, 0);
    assert.equal(r.amaflags, 'BILLING');
  });

  test('Master.csv has one line per record, in cdr_csv columns', async () => {
    await pbx.server.core.records.flush();
    const file = join(pbx.server.config.dirs.logs, 'cdr-csv', 'Master.csv');
    assert.ok(existsSync(file), file);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(lines.length, posted.length);
    const busy = lines.find((line) => line.includes('"caller-busy"'))!;
    // accountcode, src, dst, dcontext, clid, channel, dstchannel, lastapp, lastdata, start, answer (empty), end, duration, billsec, disposition, amaflags
    assert.match(busy, /^"","","caller-busy","cdr-test","","Local\/caller-busy@cdr-test-[0-9a-f]+;2","Local\/busy@cdr-test-[0-9a-f]+;1","Dial","Local\/busy@cdr-test","\d{4}-\d\d-\d\d \d\d:\d\d:\d\d",,"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d",\d+,0,"BUSY","DOCUMENTATION"$/);
    assert.ok(existsSync(join(pbx.server.config.dirs.logs, 'cdr-csv', 'acct42.csv')), 'accountlogs writes the account file');
  });

  test('CEL: the answered call, in order', async () => {
    const r = await recordOf(pbx, callerOf('caller-answer'), posted);
    await pbx.server.core.records.flush();
    const { events } = pbx.server.core.records.queryCel({ linkedid: r.linkedid, limit: 1000, offset: 0 });
    const caller = events.filter((e) => e.channame === r.channel).map((e) => e.eventtype);
    // The caller (;2) hangs up first; its ;1, hung up by that, goes last (as in Asterisk, where the
    // hang-up queued on ;1 is carried out after ;2 is destroyed), so LINKEDID_END is raised on ;1.
    // Dial() puts the answered pair in a basic bridge, whose enter and leave CEL reports as for any
    // bridge (cel.c's cel_bridge_enter_cb/cel_bridge_leave_cb filter no bridge class).
    assert.deepEqual(caller, ['CHAN_START', 'APP_START', 'ANSWER', 'BRIDGE_ENTER', 'BRIDGE_EXIT', 'APP_END', 'HANGUP', 'CHAN_END']);
    assert.equal(events.at(-1)!.eventtype, 'LINKEDID_END');
    assert.equal(events.at(-1)!.channame, r.channel.replace(/;2$/, ';1'));
    const appStart = events.find((e) => e.eventtype === 'APP_START' && e.channame === r.channel)!;
    assert.equal(appStart.appname, 'Dial');
  });

  test('CELGenUserEvent: a USER_DEFINED event with its name and extra text; without a name, nothing', async () => {
    const { two } = originate(pbx.server, 'Local/user-event@cdr-test');
    const deadline = Date.now() + 5000;
    while (!two.destroyed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await pbx.server.core.records.flush();
    const { events } = pbx.server.core.records.queryCel({ linkedid: two.linkedId, limit: 1000, offset: 0 });
    const user = events.filter((e) => e.eventtype === 'USER_DEFINED');
    assert.deepEqual(user.map((e) => [e.userdeftype, JSON.parse(e.extra), e.channame]), [['MYEVENT', { extra: 'some,extra' }, two.name]]);
  });

  describe('the read API', () => {
    const admin = (query: string): Promise<Response> => fetch(`${pbx.server.url}/admin/cdr${query}`, { headers: { authorization: AUTH } });

    test('pages newest first and filters by number and disposition', async () => {
      await pbx.server.core.records.flush();
      const all = (await (await admin('?limit=2')).json()) as { total: number; records: { dst: string }[] };
      assert.equal(all.records.length, 2);
      assert.equal(all.total, posted.length);
      const second = (await (await admin('?limit=2&offset=2')).json()) as { records: { id: number }[] };
      assert.ok(second.records.length >= 1);
      const busy = (await (await admin('?disposition=BUSY')).json()) as { records: { dst: string }[] };
      assert.ok(busy.records.length >= 1 && busy.records.every((x) => ['caller-busy', 'caller-readonly', 'caller-gosub'].includes(x.dst)));
      const byNumber = (await (await admin('?number=caller-noanswer')).json()) as { records: { disposition: string }[] };
      assert.deepEqual(byNumber.records.map((x) => x.disposition), ['NO ANSWER']);
      const future = (await (await admin(`?since=${Math.floor(Date.now() / 1000) + 3600}`)).json()) as { total: number };
      assert.equal(future.total, 0);
      const noAnswer = (await (await admin('?disposition=no_answer')).json()) as { total: number };
      assert.ok(noAnswer.total >= 1);
    });

    test('hostile parameters are 400', async () => {
      for (const query of ['?limit=0', '?limit=100000', '?limit=abc', '?offset=-1', '?since=yesterday', '?until=2024-13-99T99:99', '?disposition=MAYBE', `?number=${'9'.repeat(200)}`, '?number=%00', '?evil=1', '?limit=1&limit=2', '?since=1e99']) {
        const response = await admin(query);
        assert.equal(response.status, 400, query);
        assert.equal(typeof ((await response.json()) as { message: string }).message, 'string');
      }
    });

    test('needs credentials', async () => {
      const response = await fetch(`${pbx.server.url}/admin/cdr`);
      assert.equal(response.status, 401);
    });
  });
});
