// Tags, branches and Call-IDs come from a pool of random bytes refilled a page at a time: across
// many refills every token has its length and alphabet, and none repeats.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newBranch, newCallId, newTag } from '../../src/sip/message.ts';

test('tags, branches and Call-IDs stay well-formed and distinct across pool refills', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const tag = newTag();
    const branch = newBranch();
    const callId = newCallId();
    assert.match(tag, /^[A-Za-z0-9]{12}$/);
    assert.match(branch, /^z9hG4bK[A-Za-z0-9]{16}$/);
    assert.match(callId, /^[A-Za-z0-9]{24}$/);
    for (const token of [tag, branch, callId]) {
      assert.ok(!seen.has(token), `${token} repeated`);
      seen.add(token);
    }
  }
});
