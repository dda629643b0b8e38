// incoming_mwi_mailbox against SIPp as an external voicemail system: its unsolicited MWI NOTIFY
// (application/simple-message-summary, "Voice-Message: new/old (urgent)") sets the named mailbox's
// counts, answered 200 and read back with ARI's GET /mailboxes/{name}; a later NOTIFY replaces them.
// As res_pjsip_pubsub answers: 404 from an endpoint without the option or with a mailbox without
// "@context", and nothing is stored then.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, sipp, startSippServer, tracedMessages, type SippServer } from './sipp-peer.ts';

let peer: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('incoming-mwi', '[mwi-in]\nexten => 100,1,Hangup()\n', {
    endpoint: {
      voicemail: { context: 'mwi-in', allow: 'ulaw', incoming_mwi_mailbox: '1000@default' },
      plain: { context: 'mwi-in', allow: 'ulaw' },
      noctx: { context: 'mwi-in', allow: 'ulaw', incoming_mwi_mailbox: '2000' },
    },
  }, 'incoming-mwi');
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

/** The final status of one unsolicited NOTIFY from `caller` telling new/old. */
async function notify(caller: string, newMessages: number, oldMessages: number): Promise<string> {
  const run = sipp('mwi-notify-send.xml', [peer.target(), '-s', 'vm', '-set', 'caller', caller, '-set', 'new', String(newMessages), '-set', 'old', String(oldMessages)], { cwd: peer.work, timeoutMs: 60_000, trace: true });
  const result = await run.done;
  assert.equal(result.status, 0, result.output);
  const [answer] = tracedMessages(result, /^SIP\/2\.0 (200|404) /);
  assert.ok(answer, 'a final answer to the NOTIFY');
  return answer.split(/\r?\n/)[0].split(' ')[1];
}

async function mailbox(name: string): Promise<{ status: number; body?: unknown }> {
  const response = await peer.server.ari(`/mailboxes/${encodeURIComponent(name)}`);
  return { status: response.status, ...(response.status === 200 ? { body: await response.json() } : {}) };
}

describe('incoming_mwi_mailbox with SIPp as an external voicemail', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('incoming_mwi_mailbox=1000@default: the NOTIFY is answered 200 and the mailbox shows its counts; a later one replaces them', { timeout: 120_000 }, async () => {
    assert.equal(await notify('voicemail', 3, 5), '200');
    assert.deepEqual(await mailbox('1000@default'), { status: 200, body: { name: '1000@default', old_messages: 5, new_messages: 3 } });
    assert.equal(await notify('voicemail', 0, 8), '200');
    assert.deepEqual(await mailbox('1000@default'), { status: 200, body: { name: '1000@default', old_messages: 8, new_messages: 0 } });
  });

  test('no incoming_mwi_mailbox, or one without @context: 404 and nothing stored', { timeout: 120_000 }, async () => {
    assert.equal(await notify('plain', 2, 1), '404');
    assert.equal(await notify('noctx', 2, 1), '404');
    assert.equal((await mailbox('2000')).status, 404);
  });
});
