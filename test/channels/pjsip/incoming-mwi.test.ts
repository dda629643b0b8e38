// Reading an external voicemail's message-summary body (incoming-mwi.ts) as res_pjsip_pubsub reads
// it: the Voice-Message line's new and old counts, case-insensitively, the first number alone
// enough; anything else, or a count beyond a C int, is no count at all (the NOTIFY is answered 404).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readMessageSummary } from '../../../src/channels/pjsip/incoming-mwi.ts';
import { loadPjsipConf } from '../../../src/channels/pjsip/config/index.ts';

test('a Voice-Message line gives new and old; urgent counts are not used; case does not matter', () => {
  assert.deepEqual(readMessageSummary('Messages-Waiting: yes\r\nMessage-Account: sip:*97@pbx\r\nVoice-Message: 3/5 (1/0)\r\n'), { newMessages: 3, oldMessages: 5 });
  assert.deepEqual(readMessageSummary('messages-waiting: no\nVOICE-MESSAGE: 0/12\n'), { newMessages: 0, oldMessages: 12 });
  assert.deepEqual(readMessageSummary('Voice-Message: 7'), { newMessages: 7, oldMessages: 0 }, 'the first number alone');
  assert.deepEqual(readMessageSummary('Voice-Message:4/1 (0/0)'), { newMessages: 4, oldMessages: 1 }, 'no space needed');
});

test('no count, or a hostile one: undefined', () => {
  for (const body of ['', 'Messages-Waiting: yes\r\n', 'Voice-Message: many/some', 'Voice-Message: -1/2', 'Voice-Message: 99999999999/0', 'Voice-Message: 1/3000000000', 'X Voice-Message: 1/2', '\0'.repeat(1000)]) {
    assert.equal(readMessageSummary(body), undefined, JSON.stringify(body.slice(0, 40)));
  }
  // Only the first lines are read: a count buried after thousands of lines is not looked for.
  assert.equal(readMessageSummary(`${'x\r\n'.repeat(10_000)}Voice-Message: 1/1\r\n`), undefined);
});

test('incoming_mwi_mailbox: taken; without @context named at start-up; a control character refuses the endpoint', () => {
  const load = (value: string) => loadPjsipConf(`[vm]\ntype=endpoint\nallow=ulaw\nincoming_mwi_mailbox=${value}\n`, 'pjsip.conf');
  const good = load('1000@default');
  assert.deepEqual(good.errors, []);
  assert.deepEqual(good.warnings, []);
  assert.equal(good.config.endpoints.get('vm')?.incomingMwiMailbox, '1000@default');
  const bare = load('1000');
  assert.ok(bare.warnings.some((line) => /incoming_mwi_mailbox '?1000'? has no @context/.test(line)), bare.warnings.join('\n'));
  assert.equal(load('10\u000100@default').config.endpoints.has('vm'), false);
});
