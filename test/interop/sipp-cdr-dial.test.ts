// Unanswered SIP calls through Dial(PJSIP/...) and the CDRs Patchbay writes for them, checked
// against what Asterisk 22 writes for the same flows (main/cdr.c, apps/app_dial.c, chan_pjsip's
// SIP-to-cause table): SIPp calls in, a second SIPp plays the dialled phone, which answers 486
// (BUSY), rings until the Dial timeout (NO ANSWER), answers 503 (cause 34, Dial's CONGESTION →
// FAILED with congestion=no), or answers and talks (ANSWERED); a phone without a contact is
// CHANUNAVAIL: no party B, so `unanswered=no` posts nothing. Each flow is one record: the caller's,
// with the dialled channel as dstchannel and Dial as lastapp (the fork made when the dialplan goes on
// to Hangup() is dropped by `unanswered=no`, as Asterisk drops it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { CallDetailRecord } from '../../src/core/cdr/record.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, HAVE_SOX, randomPort, sipp, sippListening, waitFor } from './sipp-peer.ts';

const BOB_PORT = randomPort();

/** An RTP range of its own (a fresh server starts at the bottom of its range; other tests' servers hold the default's). */
const RTP_START = 41000 + 2 * Math.floor(Math.random() * 4000);

const DIALPLAN = `
[cdr-dial]
exten => 301,1,Dial(PJSIP/bob,10)
 same => n,Hangup()
exten => 302,1,Dial(PJSIP/bob,3)
 same => n,Hangup()
exten => 303,1,Dial(PJSIP/bob,10)
 same => n,Hangup()
exten => 304,1,Dial(PJSIP/nobody,10)
 same => n,Hangup()
exten => 305,1,Dial(PJSIP/bob,10)
 same => n,Hangup()
`;

let work: string;
let server: TestServer;
const posted: CallDetailRecord[] = [];

/** A server with bob at SIPp's port and `unanswered` as cdr.conf says. */
async function startServer(unanswered: boolean): Promise<void> {
  posted.length = 0;
  work = mkdtempSync(join(tmpdir(), 'patchbay-sipp-cdr-dial-'));
  writeFileSync(join(work, 'extensions.conf'), DIALPLAN);
  if (HAVE_SOX) spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-e', 'u-law', join(work, 'audio.wav'), 'synth', '4', 'sine', '1000', 'vol', '0.5']);
  server = await startTestServer({
    cdr: { unanswered },
    sip: { rtp_port_start: RTP_START, rtp_port_end: RTP_START + 200 },
    config_objects: {
      res_pjsip: {
        endpoint: {
          alice: { context: 'cdr-dial', allow: 'ulaw', aors: 'alice' },
          bob: { context: 'cdr-dial', allow: 'ulaw', aors: 'bob' },
          nobody: { context: 'cdr-dial', allow: 'ulaw', aors: 'nobody' },
        },
        aor: { alice: { max_contacts: 1 }, bob: { max_contacts: 1, contact: `sip:bob@127.0.0.1:${BOB_PORT}` }, nobody: { max_contacts: 1 } },
      },
    },
    dialplan: { file: join(work, 'extensions.conf') },
  } as never);
  server.core.records.onRecord((record) => posted.push(record));
}

async function stopServer(): Promise<void> {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}

beforeEach(() => {
  posted.length = 0;
});

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;

/** bob's phone runs `scenario`; alice calls `exten` with `callerScenario`; both must succeed. */
async function call(exten: string, scenario: string | undefined, callerScenario = 'call-expect-refusal.xml'): Promise<void> {
  const phone = scenario ? sipp(scenario, [], { cwd: work, port: BOB_PORT, timeoutMs: 30_000 }) : undefined;
  // The call must not reach bob's port before SIPp listens there (a loaded machine starts it slowly).
  if (phone) await sippListening(BOB_PORT);
  const caller = sipp(callerScenario, [target(), '-s', exten, '-set', 'caller', 'alice'], { cwd: work, timeoutMs: 30_000 });
  const called = await caller.done;
  assert.equal(called.status, 0, `caller: ${called.output}`);
  if (phone) {
    const answered = await phone.done;
    assert.equal(answered.status, 0, `phone: ${answered.output}\n${server.logLines.filter((l) => /"level":[4-6]/.test(l)).slice(-10).join('')}`);
  }
}

/** The caller's record, once every channel of the call has ended (later records would come by then). */
async function callerRecord(): Promise<CallDetailRecord> {
  const record = await waitFor('the caller record', () => posted.find((r) => r.channel.startsWith('PJSIP/alice-')), 20_000);
  await waitFor('every channel to end', () => (server.core.channels.size === 0 ? true : undefined), 20_000);
  return record;
}

describe('CDRs of unanswered SIP calls through Dial(PJSIP/...), as Asterisk 22 writes them', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  before(() => startServer(false));
  after(() => stopServer());

  test('486 Busy Here: BUSY, no answer, billsec 0, dstchannel the dialled channel, lastapp Dial', { timeout: 90_000 }, async () => {
    await call('301', 'busy-incoming.xml');
    const record = await callerRecord();
    assert.equal(posted.length, 1, JSON.stringify(posted));
    assert.equal(record.disposition, 'BUSY');
    assert.equal(record.src, 'alice');
    assert.equal(record.dst, '301');
    assert.equal(record.dcontext, 'cdr-dial');
    assert.match(record.dstchannel, /^PJSIP\/bob-[0-9a-f]+$/);
    assert.equal(record.lastapp, 'Dial');
    assert.equal(record.lastdata, 'PJSIP/bob,10');
    assert.equal(record.answer, 0);
    assert.equal(record.billsec, 0);
    assert.ok(record.duration >= 0 && record.duration <= 5, `duration ${record.duration}`);
    assert.equal(record.linkedid, record.uniqueid);
  });

  test('ringing until the Dial timeout (3 s): NO ANSWER, duration about 3 s, billsec 0', { timeout: 90_000 }, async () => {
    await call('302', 'ring-wait-cancel.xml');
    const record = await callerRecord();
    assert.equal(posted.length, 1, JSON.stringify(posted));
    assert.equal(record.disposition, 'NO ANSWER');
    assert.match(record.dstchannel, /^PJSIP\/bob-[0-9a-f]+$/);
    assert.equal(record.lastapp, 'Dial');
    assert.equal(record.lastdata, 'PJSIP/bob,3');
    assert.equal(record.answer, 0);
    assert.equal(record.billsec, 0);
    // Dial gives up after 3 s; the record ends there (a loaded machine may add a little).
    assert.ok(record.duration >= 3 && record.duration <= 8, `duration ${record.duration}`);
  });

  test('503 Service Unavailable: FAILED (cause 34, Dial status CONGESTION, congestion=no)', { timeout: 90_000 }, async () => {
    await call('303', 'unavailable-incoming.xml');
    const record = await callerRecord();
    assert.equal(posted.length, 1, JSON.stringify(posted));
    assert.equal(record.disposition, 'FAILED');
    assert.match(record.dstchannel, /^PJSIP\/bob-[0-9a-f]+$/);
    assert.equal(record.lastapp, 'Dial');
    assert.equal(record.lastdata, 'PJSIP/bob,10');
    assert.equal(record.answer, 0);
    assert.equal(record.billsec, 0);
  });

  test('a phone without a contact: Dial is CHANUNAVAIL, no party B, and unanswered=no posts nothing', { timeout: 90_000 }, async () => {
    await call('304', undefined);
    await waitFor('every channel to end', () => (server.core.channels.size === 0 ? true : undefined), 20_000);
    await server.core.records.flush();
    assert.deepEqual(posted, []);
  });

  test('answered: ANSWERED, answer when bob answered, billsec the talk time, dstchannel and Dial', { skip: HAVE_SOX ? false : 'sox is not installed', timeout: 90_000 }, async () => {
    // bob answers and waits for a BYE, and so does alice: the call is ended from ARI, on bob's channel, 1.5 s after the answer.
    const phone = sipp('answer-incoming.xml', [], { cwd: work, port: BOB_PORT, timeoutMs: 30_000 });
    await sippListening(BOB_PORT);
    const caller = sipp('call-wait-bye.xml', [target(), '-s', '305', '-set', 'caller', 'alice'], { cwd: work, timeoutMs: 30_000 });
    const bob = await waitFor('bob up', () => server.core.channels.list().find((c) => c.name.startsWith('PJSIP/bob-') && c.state === 'Up'), 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const hangup = await server.ari(`/channels/${bob.id}`, { method: 'DELETE' });
    assert.equal(hangup.status, 204);
    assert.equal((await caller.done).status, 0);
    await phone.done;
    const record = await callerRecord();
    assert.equal(posted.length, 1, JSON.stringify(posted));
    assert.equal(record.disposition, 'ANSWERED');
    assert.equal(record.dstchannel, bob.name);
    assert.equal(record.lastapp, 'Dial');
    assert.equal(record.lastdata, 'PJSIP/bob,10');
    assert.ok(record.answer >= record.start);
    assert.ok(record.billsec >= 1 && record.billsec <= 6, `billsec ${record.billsec}`);
    assert.ok(record.duration >= record.billsec);
  });
});

describe('with unanswered=yes: the record of the dialplan after Dial() is posted too, as Asterisk posts it', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  before(() => startServer(true));
  after(() => stopServer());

  test('486: the Dial record (BUSY, dstchannel bob) and the Hangup() one (no party B, BUSY from cause 17)', { timeout: 90_000 }, async () => {
    await call('301', 'busy-incoming.xml');
    await callerRecord();
    await waitFor('two records', () => (posted.length >= 2 ? true : undefined));
    assert.equal(posted.length, 2, JSON.stringify(posted));
    const [dial, hangup] = posted;
    assert.deepEqual([dial!.lastapp, dial!.disposition, dial!.dstchannel.startsWith('PJSIP/bob-')], ['Dial', 'BUSY', true]);
    assert.deepEqual([hangup!.lastapp, hangup!.disposition, hangup!.dstchannel, hangup!.dst], ['Hangup', 'BUSY', '', '301']);
    assert.equal(hangup!.uniqueid, dial!.uniqueid);
    assert.ok(hangup!.sequence > dial!.sequence);
  });

  test('no contact: one record, lastapp Dial (locked on entering Dial), no dstchannel, FAILED (cause 3 from the failed request)', { timeout: 90_000 }, async () => {
    await call('304', undefined);
    const record = await callerRecord();
    assert.equal(posted.length, 1, JSON.stringify(posted));
    assert.deepEqual([record.lastapp, record.lastdata, record.dstchannel, record.disposition, record.answer, record.billsec], ['Dial', 'PJSIP/nobody,10', '', 'FAILED', 0, 0]);
  });
});
